"""Lazy iteration over the API's paged lists (``page`` from 1, ``limit`` 1-100, ``total``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, List, Mapping, Optional, TypeVar

__all__ = ["Page", "PageIterator"]

T = TypeVar("T")

#: Fetches one page: (page number, page size) -> the decoded JSON response.
PageFetcher = Callable[[int, int], Mapping[str, Any]]


@dataclass
class Page(Generic[T]):
    """One page of a list: its items, its number (from 1), its size and the total over all pages."""

    items: List[T]
    page: int
    limit: int
    total: Optional[int]


class PageIterator(Generic[T]):
    """Iterates over every item of a paged list, fetching pages on demand.

    Pages are requested one after another until ``total`` items were seen
    (or a page comes back short or empty). Iterating again starts a new pass
    from page 1. ``total`` is the server's count (fetching page 1 if needed);
    :meth:`pages` yields whole :class:`Page` objects instead of items.
    """

    def __init__(
        self,
        fetch: PageFetcher,
        items_key: str,
        parse: Callable[[Mapping[str, Any]], T],
        page_size: int = 20,
        max_items: Optional[int] = None,
    ) -> None:
        if not 1 <= page_size <= 100:
            raise ValueError("page_size must be between 1 and 100")
        self._fetch = fetch
        self._items_key = items_key
        self._parse = parse
        self._page_size = page_size
        self._max_items = max_items
        self._first: Optional[Page[T]] = None
        self._total: Optional[int] = None
        self._total_known = False

    def _load(self, number: int) -> Page[T]:
        data = self._fetch(number, self._page_size)
        raw_items = data.get(self._items_key) or []
        items = [self._parse(item) for item in raw_items if isinstance(item, Mapping)]
        total = data.get("total")
        page = Page(
            items=items,
            page=int(data.get("page", number)),
            limit=int(data.get("limit", self._page_size)),
            total=None if total is None else int(total),
        )
        if number == 1:
            self._total = page.total
            self._total_known = True
        return page

    @property
    def total(self) -> Optional[int]:
        """The total number of items the server reports (None if it reports none)."""
        if not self._total_known:
            self._first = self._load(1)
            self._total = self._first.total
            self._total_known = True
        return self._total

    def pages(self) -> Iterator[Page[T]]:
        """Yields each page in turn, starting at page 1."""
        number = 1
        seen = 0
        while True:
            if number == 1 and self._first is not None:
                page, self._first = self._first, None  # use the cached first page once
            else:
                page = self._load(number)
            yield page
            seen += len(page.items)
            if not page.items or len(page.items) < page.limit:
                return
            if page.total is not None and seen >= page.total:
                return
            if self._max_items is not None and seen >= self._max_items:
                return
            number += 1

    def __iter__(self) -> Iterator[T]:
        count = 0
        for page in self.pages():
            for item in page.items:
                if self._max_items is not None and count >= self._max_items:
                    return
                count += 1
                yield item

    def to_list(self) -> List[T]:
        """Every item, fetching every page."""
        return list(self)
