"""Whole tables: reading one for an export, counting rows, and copying a study between databases.

``evalkit copy`` (:meth:`CopyingMixin.import_from`) moves every table, ids included, in one transaction of
the destination, through the backends' streaming and bulk-import hooks (:class:`~.core.StoreCore`), and
compares the row counts after the commit.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

from typing import Any

from .core import StoreCore, retried
from .records import StoreError
from .schema import COLUMNS, HOUSEKEEPING_SETTINGS, SCHEMA_VERSION, TABLES


class CopyingMixin(StoreCore):
    """Whole tables and the copy (a part of :class:`evalkit.store.base.Store`)."""

    @retried
    def table(self, name: str) -> list[dict[str, Any]]:
        """Every row of one table as dicts (for export), in :data:`TABLE_ORDER`."""
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}")
        return [dict(zip(COLUMNS[name], row, strict=True)) for row in self._stream(name)]

    @retried
    def counts(self) -> dict[str, int]:
        """Rows per table."""
        with self._read() as conn:
            return {t: int(self._exec(conn, f"SELECT count(*) AS n FROM {t}").fetchone()["n"]) for t in TABLES}

    def is_empty(self) -> bool:
        """True when the database holds no study data (only the settings every fresh database has)."""
        counts = self.counts()
        with self._conn() as conn:
            extra = self._exec(conn, f"SELECT count(*) AS n FROM settings WHERE key NOT LIKE 'queue:%' AND key NOT IN "
                                     f"({', '.join('?' * len(HOUSEKEEPING_SETTINGS))})",
                               HOUSEKEEPING_SETTINGS).fetchone()["n"]
        # (queue units alone are not study data: the app registers them from the config when it starts, and
        # remembers them in the settings as ``queue:<task>``)
        return extra == 0 and all(n == 0 for t, n in counts.items() if t not in ("settings", "queue_units"))

    def import_from(self, source: CopyingMixin, *, replace: bool = False, batch: int = 10_000) -> dict[str, int]:
        """Copy every table of ``source`` into this store, ids included, in one transaction; returns row counts.

        Refuses (StoreError) when this store already holds study data, unless ``replace``: then its rows
        are deleted first, in the same transaction (so a failed copy leaves the destination as it was).
        After the commit the row counts of both stores are compared; a difference raises StoreError.
        """
        if not replace and not self.is_empty():
            raise StoreError(f"the destination {self.where} already holds study data; copy into an empty database, "
                             "or pass --replace to delete what it holds first")
        expected = source.counts()
        try:
            with self._write() as conn:
                for table in reversed(TABLES):  # children before the sessions they reference
                    self._exec(conn, f"DELETE FROM {table}")
                for table in TABLES:
                    rows = source._stream(table)
                    while chunk := [row for _, row in zip(range(batch), rows, strict=False)]:
                        self._import_rows(conn, table, COLUMNS[table], chunk)
                self._put_setting(conn, "schema_version", str(SCHEMA_VERSION))  # the destination's schema
                self._after_import(conn)
        except (*self._driver_errors, *source._driver_errors) as exc:
            raise StoreError(f"copying {source.where} to {self.where} failed, nothing was changed: "
                             f"{type(exc).__name__}: {exc}") from None
        got = self.counts()
        if got != expected:
            raise StoreError(f"copy check failed: {source.where} has {expected} rows, {self.where} has {got}")
        return got
