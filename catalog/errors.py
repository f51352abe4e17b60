"""Errors the catalog raises. Each message is one line a user can act on."""


class CatalogError(ValueError):
    pass


class UnknownObject(CatalogError):
    pass


class NameInUse(CatalogError):
    pass


class ConcurrentChange(CatalogError):
    """Another writer changed the same thing first; nothing of this operation was applied."""


class DependentObjects(CatalogError):
    pass


class TransactionStateError(CatalogError):
    pass
