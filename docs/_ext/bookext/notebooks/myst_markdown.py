"""MyST text to plain Markdown that Jupyter, JupyterLab and Colab render as the site does.

Used by :mod:`bookext.notebooks.reader_notebooks` for the Markdown cells of a reader's
notebook. The MyST source is read by the parser Sphinx reads it with: myst-parser's
markdown-it (:func:`myst_parser.parsers.mdit.create_md_parser`, with the book's
``myst_enable_extensions``), so what is a role, a directive, a target, a comment, math
or code is decided by its tokens, as on the site. Each top-level block is then
written back from the source lines it came from (the tokens' line map), so Markdown
the converter does not touch stays exactly as written:

* directive fences (```` ```{name} ```` and ``:::{name}``) become Markdown: an
  admonition a block quote with a bold title, a dropdown or a self-check a
  ``<details>`` element, a ``literalinclude`` a fenced code block;
  ``{glue:figure}`` becomes a code cell that draws the figure, then its caption;
* roles (``myst_role`` tokens) are resolved by a :class:`Resolver` (the Sphinx
  build's, or a test's): glued values become the text the site shows,
  citations author-year text, glossary terms and cross-references links to
  the published site; markdown-it gives inline tokens no column, so each role is
  found in its block's source after the one before it;
* targets (``(label)=``), comments (``%``) and block breaks (``+++``) are dropped;
  code blocks, code spans and math (``$...$``, ``$$...$$``, whose ``(label)`` goes)
  are left as they are.

A role or directive the converter does not know is reported through
``Resolver.warn`` (a Sphinx warning, so the build fails and names it) and
replaced by its plain text. Nothing here imports Sphinx.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from bookext.content import problem_text
from bookext.content.quiz_order import correct_place, option_order

#: Role content with an explicit title: ``shown <target>``.
EXPLICIT = re.compile(r"(?s)(.*?)\s*<([^<>]+)>\s*$")
#: The MyST extensions the book enables (conf.py's ``myst_enable_extensions``).
BOOK_EXTENSIONS = ("dollarmath", "amsmath", "colon_fence", "deflist")
#: Top-level blocks dropped from a notebook: targets, ``%`` comments, ``+++`` breaks.
DROPPED = {"myst_target", "myst_line_comment", "myst_block_break"}
#: Blocks whose text no role is read in: code and display math.
VERBATIM = {"fence", "code_block", "math_block", "math_block_label", "amsmath"}

ADMONITION_TITLES = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "margin": "",
    "sidebar": "",
    "topic": "",
    "epigraph": "",
    "admonition": "",
    "highlights": "",
    "pull-quote": "",
}
# sphinx-design and docutils containers: their title (if any) in bold, then their content.
CONTAINERS = {
    "div",
    "container",
    "table",
    "grid",
    "grid-item",
    "grid-item-card",
    "card",
    "tab-set",
    "tab-item",
    "rubric",
    "only",
}
TEXT_ROLES = {"guilabel", "menuselection", "dfn", "index", "strong", "emphasis", "title-reference"}
CODE_DIRECTIVES = {"code", "code-block", "sourcecode"}
GLUE_DIRECTIVES = {"glue", "glue:any", "glue:figure", "glue:md", "glue:math"}
PY_ROLES = {"func", "class", "meth", "mod", "obj", "attr", "data", "exc", "const", "function"}


@dataclass
class CodeCell:
    """A code cell the Markdown asks for (a glued figure drawn where the page shows it)."""

    source: str
    outputs: list = field(default_factory=list)


class Resolver:
    """What the conversion needs from the build; the defaults keep the plain text."""

    def warn(self, message: str) -> None:
        raise ValueError(message)

    def glue_text(self, key: str, fmt: str, role: str) -> str:
        """A glued value as the site shows it (``role``: glue:text, glue:md, glue...)."""
        raise KeyError(key)

    def glue_block(self, name: str, key: str, options: dict, caption: str) -> list:
        """Pieces (Markdown strings and :class:`CodeCell`) for a glue directive."""
        raise KeyError(key)

    def glue_value(self, key: str):
        """A glued value as Python has it (an int, a float), or None where there is none."""
        raise KeyError(key)

    def cite(self, keys: list[str], kind: str) -> str:
        return ", ".join(keys)

    def term(self, shown: str, target: str) -> str:
        return shown

    def xref(self, role: str, shown: str | None, target: str) -> str:
        return shown or target

    def python(self, role: str, shown: str, target: str) -> str:
        return f"`{shown}`"

    def literalinclude(self, path: str, options: dict) -> tuple[str, str]:
        raise FileNotFoundError(path)

    def image(self, path: str, options: dict, caption: str) -> str:
        """A Markdown image of a file the page shows, with its caption."""
        return f"![{md_escape(str(options.get('alt', '')))}]({path})\n\n{caption}".strip()

    def page_url(self) -> str:
        """The address of this page on the published site ("" where unknown)."""
        return ""


def md_escape(text: str) -> str:
    """Text that Markdown shows literally (no emphasis, code, HTML or table cells).

    Brackets and parentheses are never backslash-escaped: Jupyter's MathJax reads
    ``\\[`` and ``\\(`` as the start of math.
    """
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_`|])", r"\\\1", text)


def blockquote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip("\n").split("\n"))


def details(summary: str, body: str, open_: bool = False) -> str:
    attr = " open" if open_ else ""
    return f"<details{attr}>\n<summary>{html.escape(summary)}</summary>\n\n{body.strip()}\n\n</details>"


def _plain(markdown: str) -> str:
    """Markdown inline text as plain text, for an HTML ``<summary>``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"\\([*_`|])", r"\1", text).replace("**", "")


# --- reading MyST: myst-parser's markdown-it tokens ------------------------------------------


@functools.cache
def myst_parser(extensions: tuple[str, ...] = BOOK_EXTENSIONS) -> MarkdownIt:
    """The markdown-it parser myst-parser reads pages with, for these MyST extensions."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=set(extensions)), RendererHTML)


@dataclass
class Block:
    """A top-level block of MyST: its first token, its source lines and its inline tokens."""

    token: Token
    start: int
    end: int
    inline: list[Token]


def blocks(text: str, parser: MarkdownIt | None = None) -> list[Block]:
    """The top-level blocks of ``text`` in order, with the lines each came from."""
    found: list[Block] = []
    depth = 0
    for token in (parser or myst_parser()).parse(text):
        if depth == 0 and token.map is not None:
            found.append(Block(token, token.map[0], token.map[1], []))
        if token.type == "inline" and found:
            found[-1].inline.append(token)
        depth += token.nesting
    return found


def directive_of(token: Token) -> tuple[str, str] | None:
    """``(name, argument)`` of a directive fence (```` ```{name} argument ````), else None."""
    if token.type not in ("fence", "colon_fence") or not token.info.startswith("{"):
        return None
    name, close, argument = token.info[1:].partition("}")
    return (name, argument.strip()) if close and name else None


def directives(text: str, parser: MarkdownIt | None = None):
    """Every directive in ``text``, nested ones too: ``(name, argument, body)``."""
    for block in blocks(text, parser):
        found = directive_of(block.token)
        if found is not None:
            yield *found, block.token.content
            yield from directives(block.token.content, parser)


def heading_count(text: str, parser: MarkdownIt | None = None) -> int:
    """The ``#`` headings at the top level of ``text`` (not inside directives)."""
    return sum(b.token.type == "heading_open" and b.token.markup.startswith("#") for b in blocks(text, parser))


def _role_at(text: str, pos: int, token: Token) -> re.Match | None:
    """Where the role ``token`` is written in ``text``, at or after ``pos``; the match's
    ``content`` group is the role's content as written (markdown-it turns its line breaks
    into spaces)."""
    words = r"\s+".join(re.escape(w) for w in token.content.split())
    edge = r"\s*" if token.content[:1].isspace() or token.content[-1:].isspace() else ""
    written = re.compile(
        r"\{" + re.escape(token.meta["name"]) + r"\}(?P<ticks>`+)(?P<content>" + edge + words + edge + r")(?P=ticks)"
    )
    return written.search(text, pos)


def _code_span_end(text: str, pos: int, token: Token) -> int:
    """Where the code span ``token`` ends in ``text`` (it starts at or after ``pos``)."""
    ticks = token.markup
    match = re.compile(f"(?<!`){ticks}(?!`)").search
    opened = match(text, pos)
    closed = match(text, opened.end()) if opened else None
    return closed.end() if closed else pos


class Converter:
    """Converts the MyST Markdown of one page; ``headings`` numbers its headings as the site does."""

    def __init__(
        self, resolver: Resolver, headings: list[str] | None = None, extensions: tuple[str, ...] = BOOK_EXTENSIONS
    ):
        self.resolver = resolver
        self.headings = list(headings or [])
        self.heading_count = 0
        self.problem_count = 0
        self.quiz_places: list[int] = []  # where each self-check so far shows its right option
        self.parser = myst_parser(tuple(sorted(extensions)))

    # --- inline -------------------------------------------------------------------------------

    def inline(self, text: str) -> str:
        """Inline MyST (a title, a YAML string) with its roles resolved."""
        tokens = self.parser.parseInline(text)
        return self._roles(text, [c for t in tokens for c in (t.children or [])])

    def _roles(self, text: str, children: list[Token]) -> str:
        """``text`` with each role among ``children`` (its inline tokens) resolved, the rest as written."""
        out, pos = [], 0
        for child in children:
            if child.type == "code_inline":
                end = _code_span_end(text, pos, child)
                out.append(text[pos:end])
                pos = end
            elif child.type == "myst_role":
                found = _role_at(text, pos, child)
                if found is None:
                    self.resolver.warn(
                        f"reader notebook: cannot find the role {{{child.meta['name']}}} `{child.content}` in its text"
                    )
                    continue
                out.append(text[pos : found.start()])
                out.append(self.role(child.meta["name"], found.group("content")))
                pos = found.end()
        out.append(text[pos:])
        return "".join(out)

    def role(self, name: str, content: str) -> str:
        r = self.resolver
        explicit = EXPLICIT.match(content)
        shown, target = (explicit.group(1), explicit.group(2)) if explicit else (None, content)
        if name in ("glue", "glue:", "glue:any", "glue:text", "glue:md"):
            key, fmt = content.strip(), ""
            if name in ("glue:text", "glue:md") and ":" in content:
                key, _, fmt = key.rpartition(":")  # as myst-nb splits "key:format"
            return r.glue_text(key, fmt, name)
        if name in ("gls", "term"):
            return r.term(shown or target, " ".join(target.split()))
        if name == "cite" or name.startswith("cite:"):
            kind = name.partition(":")[2] or "p"
            return r.cite([k.strip() for k in content.split(",") if k.strip()], kind)
        if name in ("doc", "ref", "numref", "any", "std:ref", "std:doc"):
            return r.xref(name.rpartition(":")[2], shown, target.strip())
        if name.startswith("py:") or name in PY_ROLES:
            kind = name.rpartition(":")[2]
            if shown is None:
                shown = target.lstrip("~")
                if target.startswith("~"):
                    shown = shown.rpartition(".")[2]
                if kind in ("func", "meth", "function"):
                    shown += "()"
            return r.python(kind, shown, target.lstrip("~").lstrip("."))
        if name == "math":
            return f"${content}$"
        if name in ("sub", "sup", "kbd"):
            return f"<{name}>{html.escape(content)}</{name}>"
        if name == "abbr":
            return md_escape(re.sub(r"\s*\(.*\)\s*$", "", content))
        if name in ("code", "literal", "samp", "file", "command", "program"):
            return f"`{content}`"
        if name in TEXT_ROLES:
            return md_escape(re.sub(r"\s*<[^<>]*>\s*$", "", content) if name == "index" else shown or target)
        if name == "eq":
            return r.xref("eq", shown, target.strip())
        r.warn(f"reader notebook: the role {{{name}}} has no Markdown form (in {{{name}}}`{content}`)")
        return md_escape(shown or target)

    # --- blocks -------------------------------------------------------------------------------

    def convert(self, text: str) -> list:
        """Pieces in order: Markdown strings and :class:`CodeCell` objects."""
        pieces: list = []
        buffer: list[str] = []

        def flush():
            if buffer:
                pieces.append("\n".join(buffer))
                buffer.clear()

        lines = text.split("\n")
        done = 0  # lines before this one are handled; blank lines between blocks stay
        for block in blocks(text, self.parser):
            buffer.extend(lines[done : block.start])
            done = max(done, block.end)
            for piece in self._block(block, lines[block.start : block.end]):
                if isinstance(piece, str):
                    buffer.extend(piece.split("\n"))
                else:
                    flush()
                    pieces.append(piece)
        buffer.extend(lines[done:])
        flush()
        return [re.sub(r"\n{3,}", "\n\n", p).strip("\n") if isinstance(p, str) else p for p in pieces]

    def _block(self, block: Block, lines: list[str]) -> list:
        """One top-level block as pieces (Markdown text and code cells)."""
        token = block.token
        if token.type in DROPPED:
            return []
        directive = directive_of(token)
        if directive is not None:
            indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
            body = token.content.split("\n")
            body = body[:-1] if body and body[-1] == "" else body
            return [_indent(p, indent) if isinstance(p, str) else p for p in self.directive(*directive, body)]
        if token.type == "math_block_label":  # "$$ (label)": MyST's equation label, nothing Jupyter knows
            last = lines[-1]
            lines = [*lines[:-1], last[: last.rindex("$$") + 2]]
        if token.type in VERBATIM or token.type == "colon_fence":
            return ["\n".join(lines)]
        if token.type == "heading_open" and token.markup.startswith("#"):
            number = self.headings[self.heading_count] if self.heading_count < len(self.headings) else ""
            self.heading_count += 1
            first = lines[0].lstrip()
            rest = first[len(token.markup) :].lstrip()
            lines = [f"{token.markup} {number}{rest}", *lines[1:]]
        children = [c for t in block.inline for c in (t.children or [])]
        return [self._roles("\n".join(lines), children)]

    @staticmethod
    def _options(body: list[str]) -> tuple[dict, list[str]]:
        """A directive's options and the rest of its body, read as myst-parser reads them: a
        ``---`` YAML block, or ``:key: value`` lines (``is_option_line``, ``options_to_items``)."""
        from myst_parser.parsers.directives import is_option_line
        from myst_parser.parsers.options import options_to_items

        if body and body[0].strip() == "---":
            end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
            if end is not None:
                options = yaml.safe_load("\n".join(body[1:end])) or {}
                return options, body[end + 1 :]
        count = next((i for i, line in enumerate(body) if not is_option_line(line)), len(body))
        items, _ = options_to_items("\n".join(line.lstrip()[1:] for line in body[:count]))
        return {key: value if value != "" else True for key, value in items}, body[count:]

    def _body(self, lines: list[str]) -> str:
        """Nested MyST converted to Markdown (must not ask for code cells)."""
        parts = []
        for piece in self.convert("\n".join(lines).strip("\n")):
            if isinstance(piece, str):
                parts.append(piece)
            else:
                self.resolver.warn("reader notebook: a figure inside another directive cannot become a code cell")
        return "\n\n".join(parts)

    def directive(self, name: str, argument: str, body: list[str]) -> list:
        r = self.resolver
        options, content = self._options(body)
        if name in ADMONITION_TITLES:
            title = self.inline(argument) if argument else ADMONITION_TITLES[name]
            inner = self._body(content)
            text = f"**{title}**\n\n{inner}" if title else inner
            return [blockquote(text)]
        if name == "dropdown":
            return [details(_plain(self.inline(argument)) or "Details", self._body(content), "open" in options)]
        if name == "self-check":
            return [self.self_check("\n".join(content))]
        if name == "problem":
            return [self.problem(argument.strip(), "\n".join(content))]
        if name in CONTAINERS:
            caption = f"**{self.inline(argument)}**\n\n" if argument and name != "only" else ""
            return [caption + self._body(content)]
        if name in ("figure", "image"):
            return [r.image(argument.strip(), options, self._body(content))]
        if name == "raw" and argument.strip() == "html":
            return ["\n".join(content)]
        if name in CODE_DIRECTIVES:
            return [f"```{argument.strip()}\n" + "\n".join(content).strip("\n") + "\n```"]
        if name == "literalinclude":
            try:
                code, language = r.literalinclude(argument.strip(), options)
            except (OSError, ValueError) as err:
                r.warn(f"reader notebook: literalinclude {argument.strip()}: {err}")
                return []
            return [f"```{language}\n{code.rstrip()}\n```"]
        if name == "math":
            return ["$$\n" + "\n".join(content).strip("\n") + "\n$$"]
        if name in GLUE_DIRECTIVES:
            caption = self._body(content)
            return r.glue_block(name, argument.strip(), options, caption)
        if name == "explorable":
            # An interactive figure runs only in the site's pages: say what it shows, and where.
            url = r.page_url()
            where = f"[on the site]({url})" if url else "on the site"
            return [blockquote(f"**Interactive figure** ({where}). {self._body(content)}".strip())]
        r.warn(f"reader notebook: the directive {{{name}}} has no Markdown form")
        return [self._body(content)] if content else []

    def self_check(self, text: str) -> str:
        """A self-check question: the options as a list, the answer and reasons folded below."""
        data = yaml.safe_load(text) or {}
        options = data.get("options") or []
        # The page's order (bookext.content.quiz_order), so "(b)" names the same option in both.
        if all(isinstance(o, dict) for o in options):
            correct = next((i for i, o in enumerate(options) if o.get("correct")), None)
            texts = [str(o.get("text", "")) for o in options]
            order = option_order(str(data.get("question", "")), texts, correct, self.quiz_places)
            if correct is not None:
                self.quiz_places.append(correct_place(order, correct))
            options = [options[i] for i in order]
        letters = "abcdefghijklmnopqrstuvwxyz"
        lines = [f"**Self-check.** {self.inline(str(data.get('question', '')))}", ""]
        lines += [f"- ({letters[i]}) {self.inline(str(o.get('text', '')))}" for i, o in enumerate(options)]
        right = [letters[i] for i, o in enumerate(options) if o.get("correct")]
        reasons = [f"**({right[0]})** is right." if right else "", ""]
        for i, o in enumerate(options):
            verdict = "Right." if o.get("correct") else "Not quite."
            reasons.append(f"- ({letters[i]}) **{verdict}** {self.inline(str(o.get('why', '')))}")
        return "\n".join(lines) + "\n\n" + details("Answer", "\n".join(reasons))

    def problem(self, key: str, text: str) -> str:
        """A numeric problem: its question and rule, then the hint and the answer folded (the
        solution cell that follows computes it)."""
        data = yaml.safe_load(text) or {}
        self.problem_count += 1
        answer = self.resolver.glue_value(key)
        tolerance = self.resolver.glue_value(str(data.get("tolerance", "")))
        unit = str(data.get("unit", "")).strip()
        if not isinstance(answer, (int, float)) or not isinstance(tolerance, (int, float)):
            self.resolver.warn(f"reader notebook: problem {key!r} has no glued answer and tolerance")
            return ""
        rule = "".join(
            f"`{t}`" if kind == "code" else md_escape(t) for kind, t in problem_text.rule(answer, tolerance, unit)
        )
        shown = problem_text.answer_text(answer, data.get("format"), exact=not tolerance)
        solution = self.inline(str(data.get("solution", ""))).strip()
        answer_md = (
            f"**{md_escape(shown)}{' ' + md_escape(unit) if unit else ''}.** "
            + (solution + " " if solution else "")
            + "The folded code cell below computes it."
        )
        return "\n\n".join(
            [
                f"**Problem {self.problem_count}.** {self.inline(str(data.get('question', ''))).strip()}",
                f"*{rule}*",
                details("Hint", self.inline(str(data.get("hint", "")))),
                details("Answer", answer_md),
            ]
        )


def _indent(text: str, indent: str) -> str:
    if not indent:
        return text
    return "\n".join(indent + line if line else line for line in text.split("\n"))
