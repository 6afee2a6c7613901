"""Every relative link and image in README.md and docs/*.md resolves, anchors included; README stays short.

A newcomer follows links from the README into docs/ and back; a page renamed or a heading reworded must not leave
a dead link behind. Anchors are checked against GitHub's heading slugs, since GitHub is where the pages are read.
"""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+).*?\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets (an image inside a link).
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HTML_SRC = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers: a link shown as code is not a link."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its rendered text, lower-cased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = text.replace("`", "")
    text = re.sub(r"<[^>]+>", "", text)
    text = text.lower()
    kept: list[str] = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -" or category[0] in "LMN" or category == "Pc":  # GitHub keeps letters, marks, digits, _
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def link_targets(path: Path) -> list[tuple[int, str]]:
    targets: list[tuple[int, str]] = []
    for number, line in _prose_lines(path.read_text(encoding="utf-8")):
        prose = _INLINE_CODE.sub("", line)
        for pattern in (_INLINE_LINK, _HTML_SRC):
            targets.extend((number, m.group(1)) for m in pattern.finditer(prose))
        definition = _REFERENCE_DEF.match(prose)
        if definition:
            targets.append((number, definition.group(1)))
    return targets


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def broken_links(path: Path) -> list[str]:
    """Each relative link of the page that does not resolve, as `page:line: target (why)`."""
    problems = []
    for number, target in link_targets(path):
        if _EXTERNAL.match(target) or target.startswith("//"):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{_shown(path)}:{number}: {target}"
        if not destination.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{where} (no heading with anchor #{anchor})")
    return problems


@pytest.mark.parametrize("page", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    assert broken_links(page) == []


# A file named in code, `runtime/census.py` or `tests/sim/test_decisions_pinned.py`: relative to the repository or to
# src/rollwise. The former drivers/ package is named only where a page says where its modules went.
_NAMED_FILE = re.compile(r"`([\w.*/-]+/[\w.*-]+\.(?:py|yaml|json|md|toml|png))`")


def missing_named_files(path: Path, root: Path = ROOT) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [name for name in _NAMED_FILE.findall(text) if not name.startswith("drivers/")
            and not any(any(base.glob(name)) for base in (root, root / "src" / "rollwise"))]


@pytest.mark.parametrize("page", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_page_names_exists(page: Path) -> None:
    assert missing_named_files(page) == []


def test_a_moved_file_named_in_a_page_is_reported(tmp_path: Path) -> None:
    (tmp_path / "src" / "rollwise" / "sim").mkdir(parents=True)
    (tmp_path / "src" / "rollwise" / "sim" / "tally.py").write_text("", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("Counters (`sim/tally.py`), the census (`core/census.py`), history (`drivers/wall.py`).\n",
                    encoding="utf-8")
    assert missing_named_files(page, root=tmp_path) == ["core/census.py"]


def test_readme_is_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_docs_index_lists_every_page() -> None:
    index = ROOT / "docs" / "README.md"
    listed = {target.partition("#")[0] for _, target in link_targets(index)}
    pages = {p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md"}
    assert pages - listed == set(), "docs/README.md does not list these pages"


def test_slugs_follow_github_rules() -> None:
    assert github_slug("Local control plane: `rollwise up`") == "local-control-plane-rollwise-up"
    assert github_slug("Quorum-aware updates (DEP-07)") == "quorum-aware-updates-dep-07"
    assert github_slug("What `--perturb stale:K` means") == "what---perturb-stalek-means"
    assert github_slug("See [the guide](x.md) now") == "see-the-guide-now"


def test_a_dead_link_a_missing_image_and_a_wrong_anchor_are_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#a-section) [self](#page) [web](https://example.com/x.md)\n"
        "[gone](missing.md) ![pic](images/none.png) [bad anchor](other.md#no-such)\n"
        "`[in code](nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "missing.md (no such file)",
        "images/none.png (no such file)",
        "other.md#no-such (no heading with anchor #no-such)",
    ]


def test_repeated_headings_get_numbered_anchors(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Notes\n\n## Example\n\n## Example\n", encoding="utf-8")
    assert anchors(page) == {"notes", "example", "example-1"}
