"""The application core: every use case once, ``ctx.require(action)`` first.

Public service functions take a :class:`~benchbook.services.context.Context` first. The list of
operations that every transport must expose is :data:`benchbook.services.registry.OPERATIONS`.
"""
