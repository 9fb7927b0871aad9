"""The README stays a five-minute read, and its links and those of docs/ stay true.

* README.md is at most 300 lines (issue "A release is an object", point 7);
* every relative link and image of README.md and docs/*.md names an existing file (web links,
  mail links and links to an anchor of the same page are skipped; a link's own anchor is
  dropped before the file is looked up);
* the README's two commands, ``make run`` and ``make test``, are targets of the Makefile.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 300

#: ``[text](target)`` and ``![alt](target)``, with an optional ``"title"`` after the target.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
EXTERNAL = ("http://", "https://", "mailto:")


def link_targets(markdown):
    """The targets of the markdown links and images in ``markdown``, outside code."""
    text = FENCE.sub("", markdown)
    # Code spans may hold text that looks like a link; a link whose text is code keeps its
    # target (the span is removed, the brackets and parentheses stay).
    text = INLINE_CODE.sub("", text)
    return LINK.findall(text)


def broken_links(markdown, base):
    """Relative link targets of ``markdown`` that name no existing file or folder under
    ``base`` (the folder of the markdown file)."""
    broken = []
    for target in link_targets(markdown):
        if target.startswith(EXTERNAL) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        if not (base / path).exists():
            broken.append(target)
    return broken


def markdown_files():
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_is_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines, more than {MAX_README_LINES}: move details into "
        "docs/ and link them")


def test_the_link_checker_reports_a_missing_path(tmp_path):
    (tmp_path / "present.md").write_text("x", encoding="utf-8")
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "shot.png").write_bytes(b"")
    markdown = "\n".join([
        "See [the page](present.md), [a section](present.md#part) and [here](#top).",
        "![shot](img/shot.png) ![missing shot](img/made-up-missing.png)",
        "[web](https://example.org/nowhere.md) [mail](mailto:someone@example.org)",
        '[titled](present.md "a title") and [gone](no/such/file.md#anchor).',
        "`[not a link](inside/code.md)`",
        "```",
        "[not a link either](inside/fence.md)",
        "```",
    ])
    assert broken_links(markdown, tmp_path) == ["img/made-up-missing.png",
                                                "no/such/file.md#anchor"]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(path):
    broken = broken_links(path.read_text(encoding="utf-8"), path.parent)
    assert not broken, f"{path.relative_to(ROOT)} links to missing files: {broken}"


def test_the_readme_links_into_docs():
    targets = link_targets(README.read_text(encoding="utf-8"))
    assert any(t.startswith("docs/") for t in targets)
    assert any(t.startswith("assets/screenshots/") for t in targets)


def makefile_targets():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, re.MULTILINE))


def readme_make_commands():
    """The ``make <target>`` commands that stand alone on a line of the README's code blocks."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", README.read_text(encoding="utf-8"),
                        re.MULTILINE | re.DOTALL)
    return {m.group(1) for block in blocks
            for m in re.finditer(r"^make\s+([A-Za-z0-9_.-]+)\s*$", block, re.MULTILINE)}


def test_the_readme_commands_are_makefile_targets():
    commands = readme_make_commands()
    assert commands == {"run", "test"}, f"the README's commands are {sorted(commands)}"
    missing = commands - makefile_targets()
    assert not missing, f"README commands without a Makefile target: {sorted(missing)}"
