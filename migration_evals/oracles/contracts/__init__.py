"""Static contracts: what a recipe promises about the patched tree, checked without a build.

Each contract kind (``java-release``, ``go-imports``, ``base-image``) is declared by its
ecosystem (``migration_evals.oracles.ecosystems.<name>.contracts``), which pairs the checks
of this package: ``java`` (every build file targets ``contract.target_release``), ``go``
(touched Go files no longer import the old paths), ``docker`` (FROM lines move to the new
images, nothing else), and, for the kinds whose recipes name them under
``contract.outside``, the constructs no migration of that kind explains, added by the patch
(``outside``; found by ``go_outside`` and ``java_outside``). Each check is a pure function
of (recipe, changeset params, tree). An empty list means the contract holds; each
``Evidence`` is one way it does not. ``migration_evals.oracles.ecosystems.check_contract``
dispatches on the recipe's ``contract.kind``.
"""
