"""The data layer: identity, versions, diff, sources, mapping, catalog. No runtime, no eval."""
