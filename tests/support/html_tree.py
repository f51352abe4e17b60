"""A small HTML tree (standard library parser) so the page tests can look at elements, their
attributes and text the way a browser script would, instead of matching strings."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    children: list = field(default_factory=list)

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join(" ".join(parts).split())

    def iter(self):
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs) -> list[Element]:
        """Elements below this one with that tag and those attributes (`class_` matches one class;
        True matches any value)."""
        found = []
        for e in self.iter():
            if tag is not None and e.tag != tag:
                continue
            if all(_matches(e, key, want) for key, want in attrs.items()):
                found.append(e)
        return found

    def find(self, tag: str | None = None, **attrs) -> Element:
        found = self.find_all(tag, **attrs)
        assert len(found) == 1, f"{len(found)} <{tag} {attrs}> elements"
        return found[0]


def _matches(e: Element, key: str, want) -> bool:
    if key == "class_":
        return want in (e.attrs.get("class") or "").split()
    name = key.replace("_", "-")
    if want is True:
        return name in e.attrs
    return e.attrs.get(name) == str(want)


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        raise AssertionError(f"</{tag}> closes nothing")

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert len(builder.stack) == 1, f"unclosed elements: {[e.tag for e in builder.stack[1:]]}"
    return builder.root
