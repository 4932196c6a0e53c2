"""The versioned registered nouns every transport serves alike (issue 32): harnesses,
recipes, graders and environment recipes, each with ``register_<noun>``, ``list_<nouns>``,
``get_<noun>`` and (all but recipes) ``delete_<noun>_version`` — the SPEC D names of the service
functions, the HTTP ``operation_id`` and the MCP tools. ``api.registered``,
``cli.registered`` and ``mcp.registered`` build their routes, commands and guides from these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from benchbook.services import environments, graders, harnesses, recipes


@dataclass(frozen=True)
class NounOperations:
    """A registered noun's operations.

    Attributes:
        name: the noun (``harness``): ``register_harness``, ``get_harness``, the HTTP body
            parameter ``harness`` and path parameter ``harness_id``.
        plural: ``list_<plural>`` (``list_harnesses``).
        service: the module holding the functions (``services.harnesses``).
        deletable: whether ``delete_<name>_version`` exists.
    """

    name: str
    plural: str
    service: ModuleType
    deletable: bool = True

    def _function(self, operation: str) -> Callable[..., Any]:
        function: Callable[..., Any] = getattr(self.service, operation)
        return function

    @property
    def register(self) -> Callable[..., Any]:
        return self._function(f"register_{self.name}")

    @property
    def list(self) -> Callable[..., Any]:
        return self._function(f"list_{self.plural}")

    @property
    def get(self) -> Callable[..., Any]:
        return self._function(f"get_{self.name}")

    @property
    def delete(self) -> Callable[..., Any] | None:
        return self._function(f"delete_{self.name}_version") if self.deletable else None


HARNESSES = NounOperations("harness", "harnesses", harnesses)
RECIPES = NounOperations("recipe", "recipes", recipes, deletable=False)
GRADERS = NounOperations("grader", "graders", graders)
ENVIRONMENTS = NounOperations("environment", "environments", environments)
