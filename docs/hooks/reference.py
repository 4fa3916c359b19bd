"""MkDocs hook: fills the generated reference pages from the code, so they cannot drift from it.

* ``<!-- evalkit:config-keys -->`` (``docs/reference/config.md``) becomes the reference of every table and key of
  ``config.toml``, from :mod:`evalkit.config_keys` (which ``tests/test_config_keys.py`` keeps in step with the
  parser): one section per table, a Markdown table of key / type / default / description, and a short example.
* ``<!-- evalkit:cli -->`` (``docs/reference/cli.md``) becomes the command-line reference, from
  ``evalkit.__main__.build_parser()``: the program's usage, then one section per subcommand with its help, its
  usage and each argument's help, default and choices (found by walking the parser's actions).
* ``<!-- evalkit:pearmut-keys -->`` (``docs/how-to/coming-from-pearmut.md``) becomes three tables of what each key
  of a Pearmut campaign becomes in evalkit: the campaign's keys, ``info``'s keys and an item's keys, from
  ``TOP_KEYS``, ``INFO_KEYS`` and ``ITEM_KEYS`` of :mod:`evalkit.pearmut_import` (what the importer itself reads
  and prints).

Imports evalkit from this checkout (the repository root is put first on ``sys.path``) and the standard library
only. ``argparse`` offers no public way to list a parser's actions, so its ``_actions``,
``_mutually_exclusive_groups`` and ``_choices_actions`` attributes are read (stable since Python 3.2).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CONFIG_MARKER = "<!-- evalkit:config-keys -->"
CLI_MARKER = "<!-- evalkit:cli -->"
PEARMUT_MARKER = "<!-- evalkit:pearmut-keys -->"
#: the width the usage blocks are wrapped to (argparse reads the terminal's otherwise)
USAGE_COLUMNS = 80


def _evalkit() -> tuple[Any, Any]:
    """The modules :mod:`evalkit.config_keys` and :mod:`evalkit.__main__` of this checkout."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from evalkit import __main__ as cli
    from evalkit import config_keys

    return config_keys, cli


def _pearmut_import() -> Any:
    """The module :mod:`evalkit.pearmut_import` of this checkout."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from evalkit import pearmut_import

    return pearmut_import


# ----------------------------------------------------------------------------- Markdown helpers


def _escape(text: str, *, cell: bool = True) -> str:
    """``text`` as Markdown: ``<``, ``>`` and ``&`` escaped outside code spans, newlines as spaces, and for a table
    ``cell`` its pipes escaped."""
    parts = text.replace("\n", " ").split("`")
    for k in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[k] = parts[k].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = "`".join(parts)
    return out.replace("|", "\\|") if cell else out


def _code(text: str) -> str:
    """``text`` as a code span (longer backtick fences when it holds backticks)."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return [*out, ""]


# ----------------------------------------------------------------------------- the configuration reference


def section_anchor(section_id: str) -> str:
    return "top-level" if section_id == "top" else re.sub(r"[._]", "-", section_id)


def _is_toml_value(text: str) -> bool:
    try:
        tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError:
        return False
    return True


def _default(default: str, required: str) -> str:
    if default == required:
        return "**required**"
    if default.startswith(required):
        return "**required**" + _escape(default[len(required):])
    return _code(default) if _is_toml_value(default) else _escape(default)


def _where(sec: Any) -> str:
    """Where a section's keys go: "`[[tasks]]` with `kind = "score"`"."""
    table = _code(sec.table) if sec.table else "the top level of the file"
    if sec.when is None:
        return table
    key, values = sec.when
    if len(values) == 1:
        return f"{table} with " + _code(f'{key} = "{values[0]}"')
    return f"{table} with {_code(key)} one of " + ", ".join(_code(f'"{v}"') for v in values)


def _link(sec: Any) -> str:
    return f"[{sec.title}](#{section_anchor(sec.id)})"


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _related(sec: Any, sections: Any, applies: Any) -> str:
    """Which other sections describe keys of the same tables: those that apply to every table this one applies to
    ("Such a table also takes ..."), or for a table's common keys, the sections its ``kind`` / ``type`` adds."""
    same = [s for s in sections if s is not sec and s.table == sec.table]
    if sec.when is None:
        parts = [s for s in same if s.when is not None]
        if not parts:
            return ""
        selector = _code(parts[0].when[0])
        return f"Depending on its {selector}, a table also takes the keys of {_and([_link(s) for s in parts])}."
    also = [s for s in same if all(applies(s, sec.table, {sec.when[0]: v}) for v in sec.when[1])]
    return f"Such a table also takes the keys of {_and([_link(s) for s in also])}." if also else ""


def config_reference() -> str:
    """The configuration reference, Markdown, from :data:`evalkit.config_keys.SECTIONS`."""
    keys, _cli = _evalkit()
    sections = keys.SECTIONS
    out = ["Every key `config.toml` takes, generated from `evalkit/config_keys.py`; a test fails when the parser "
           "reads a key that is not described there, or a described key is no longer read. Relative paths are "
           "relative to the config file; unknown keys are errors with a did-you-mean hint.", ""]
    out += _table(("Table", "Section"), [(_where(s), _link(s)) for s in sections])
    for sec in sections:
        level = "###" if sec.id.count(".") >= 2 else "##"
        out += [f"{level} {sec.title} {{#{section_anchor(sec.id)}}}", ""]
        related = _related(sec, sections, keys.applies)
        out += [f"In {_where(sec)}." + (f" {related}" if related else ""), "", _escape(sec.intro, cell=False), ""]
        rows = []
        for key in sec.keys:
            name = _code(key.name)
            kind = _escape(key.type)
            if key.allowed:
                kind += "<br>one of " + ", ".join(_code(f'"{v}"') for v in key.allowed)
            text = _escape(key.description)
            if key.see:
                text += f" See {_link(keys.section(key.see))}."
            rows.append((name, kind, _default(key.default, keys.REQUIRED), text))
        out += _table(("Key", "Type", "Default", "Description"), rows)
        if sec.example:
            out += ["```toml", sec.example.rstrip("\n"), "```", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- the command-line reference


def subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand of ``parser``, in the order they were added (aliases once)."""
    for action in parser._actions:
        choices = getattr(action, "choices", None)
        if not isinstance(choices, dict) or not all(isinstance(p, argparse.ArgumentParser) for p in choices.values()):
            continue
        helps = {a.dest: a.help or "" for a in getattr(action, "_choices_actions", [])}
        seen: set[int] = set()
        for name, sub in choices.items():
            if id(sub) not in seen:
                seen.add(id(sub))
                yield name, helps.get(name, ""), sub


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments, without ``-h`` and without the subcommands."""
    return [a for a in parser._actions if not (a.dest == "help" and a.nargs == 0)
            and not isinstance(getattr(a, "choices", None), dict)]


def _invocation(action: argparse.Action) -> str:
    """How the argument is written: ``config``, ``--samples SAMPLES``, ``-o OUTPUT, --output OUTPUT``."""
    if not action.option_strings:
        name = action.metavar or action.dest
        return f"{name} ..." if action.nargs in ("*", "+") else str(name)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    if action.metavar is not None:
        meta = str(action.metavar)
    elif action.choices is not None:
        meta = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        meta = action.dest.upper()
    if action.nargs == "+":
        meta = f"{meta} [{meta} ...]"
    elif action.nargs == "*":
        meta = f"[{meta} ...]"
    elif action.nargs == "?":
        meta = f"[{meta}]"
    elif isinstance(action.nargs, int):
        meta = " ".join([meta] * action.nargs)
    return ", ".join(f"{o} {meta}" for o in action.option_strings)


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            text = text % {**vars(action), "prog": prog}
    return text


def _usage(parser: argparse.ArgumentParser) -> str:
    """The parser's usage line(s), wrapped at :data:`USAGE_COLUMNS`."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(USAGE_COLUMNS + 2)  # argparse wraps at the terminal's width minus 2
    try:
        return parser.format_usage().strip()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def _sentence(text: str) -> str:
    """``text`` as a sentence: its first letter capitalised, a full stop at the end."""
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", ".)")) else text + "."


def _argument_rows(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    rows = []
    for action in _arguments(parser):
        text = _escape(_sentence(_help(action, parser.prog)))
        if action.choices is not None:
            text += (" " if text else "") + "One of " + ", ".join(_code(str(c)) for c in action.choices) + "."
        if action.required:
            default = "**required**"
        elif action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
            default = ""
        else:
            default = _code(str(action.default))
        rows.append((_code(_invocation(action)), default, text))
    return rows


def _command(name: str, help_text: str, parser: argparse.ArgumentParser, level: int, anchor: str) -> list[str]:
    out = [f"{'#' * level} {name} {{#{anchor}}}", ""]
    if help_text:
        out += [_escape(_sentence(help_text), cell=False), ""]
    if parser.description:
        out += [_escape(parser.description, cell=False), ""]
    out += ["```text", _usage(parser), "```", ""]
    for group in parser._mutually_exclusive_groups:
        names = [_code(_invocation(a).split(",")[-1].split(" ")[0].strip()) for a in group._group_actions]
        need = "Exactly one" if group.required else "At most one"
        out += [f"{need} of {', '.join(names)} is given.", ""]
    rows = _argument_rows(parser)
    if rows:
        out += _table(("Argument", "Default", "Description"), rows)
    for sub_name, sub_help, sub in subcommands(parser):
        out += _command(sub_name, sub_help, sub, min(level + 1, 6), f"{anchor}-{sub_name}")
    return out


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The command-line reference, Markdown, from ``parser`` (default: ``evalkit.__main__.build_parser()``)."""
    if parser is None:
        parser = _evalkit()[1].build_parser()
    out = [f"Every command of {_code(parser.prog)}, generated from its argument parser "
           "(`evalkit.__main__.build_parser()`). After `pip install .` the same commands are the program `evalkit` "
           "(`evalkit check`, `evalkit serve`, ...).", ""]
    if parser.description:
        out += [_escape(parser.description, cell=False), ""]
    out += ["```text", _usage(parser), "```", ""]
    commands = list(subcommands(parser))
    if commands:
        out += _table(("Command", "What it does"),
                      [(f"[{_code(name)}](#{_anchor_of(name)})", _escape(_sentence(text)))
                       for name, text, _ in commands])
    rows = _argument_rows(parser)
    if rows:
        out += ["Options of the program itself:", "", *_table(("Argument", "Default", "Description"), rows)]
    for name, text, sub in commands:
        out += _command(_code(name), text, sub, 2, _anchor_of(name))
    return "\n".join(out)


def _anchor_of(command: str) -> str:
    return "command-" + re.sub(r"[^a-z0-9-]+", "-", command.lower()).strip("-")


# ----------------------------------------------------------------------------- the Pearmut key tables


#: (heading, the dict's name in :mod:`evalkit.pearmut_import`, the key column's header, a sentence before the table)
PEARMUT_TABLES = (
    ("Campaign keys", "TOP_KEYS", "Campaign key", "The keys at the top of the campaign file."),
    ("`info` keys", "INFO_KEYS", "`info` key", "The settings under `info`. A key evalkit cannot carry over says "
     "\"not supported\" and why; the import reports it and goes on."),
    ("Item keys", "ITEM_KEYS", "Item key", "The keys of one evaluation item (one segment of a document)."),
)


def pearmut_reference() -> str:
    """The tables of what each Pearmut key becomes, Markdown, from :mod:`evalkit.pearmut_import`'s ``TOP_KEYS``,
    ``INFO_KEYS`` and ``ITEM_KEYS``."""
    module = _pearmut_import()
    out = ["Generated from `evalkit/pearmut_import.py`, the tables the importer itself works from: a campaign or "
           "`info` key that is not in them is refused, naming it; an item's other keys are kept under the item's "
           "`meta.pearmut`. `IMPORT.md` in the study folder lists the keys your campaign has, with their values "
           "and what each became.", ""]
    for title, name, header, intro in PEARMUT_TABLES:
        keys = getattr(module, name)
        out += [f"### {title}", "", intro, ""]
        out += _table((header, "In evalkit"), [(_code(key), _escape(text)) for key, text in keys.items()])
    return "\n".join(out)


# ----------------------------------------------------------------------------- the hook


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    """The page with its generation markers replaced by the generated references (other pages unchanged)."""
    if CONFIG_MARKER in markdown:
        markdown = markdown.replace(CONFIG_MARKER, config_reference())
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if PEARMUT_MARKER in markdown:
        markdown = markdown.replace(PEARMUT_MARKER, pearmut_reference())
    return markdown
