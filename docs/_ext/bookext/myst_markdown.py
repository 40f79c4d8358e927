"""MyST text to plain Markdown that Jupyter, JupyterLab and Colab render as the site does.

Used by :mod:`bookext.reader_notebooks` for the Markdown cells of a reader's
notebook. The conversion works on the MyST source, block by block:

* directive fences (```` ```{name} ```` and ``:::{name}``) become Markdown: an
  admonition a block quote with a bold title, a dropdown or a self-check a
  ``<details>`` element, a ``literalinclude`` a fenced code block;
  ``{glue:figure}`` becomes a code cell that draws the figure, then its caption;
* roles (``{name}`text```) are resolved by a :class:`Resolver` (the Sphinx
  build's, or a test's): glued values become the text the site shows,
  citations author-year text, glossary terms and cross-references links to
  the published site;
* ``(label)=`` targets and ``%`` comments are dropped; code fences, code spans
  and math (``$...$``, ``$$...$$``) are left as they are.

A role or directive the converter does not know is reported through
``Resolver.warn`` (a Sphinx warning, so the build fails and names it) and
replaced by its plain text. Nothing here imports Sphinx.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import yaml

from bookext import problem_text
from bookext.quiz_order import option_order

# A role, or a code span (left alone): whichever starts first.
INLINE = re.compile(
    r"\{(?P<role>[A-Za-z][\w:+.-]*)\}(?P<ticks>`+)(?P<content>.+?)(?P=ticks)(?!`)"
    r"|(?P<code>(?P<cticks>`+).+?(?P=cticks))",
    re.S,
)
EXPLICIT = re.compile(r"(?s)(.*?)\s*<([^<>]+)>\s*$")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
TARGET = re.compile(r"^\s*\([^()\s]+\)=\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
DISPLAY_MATH_LABEL = re.compile(r"^(\s*\$\$)\s*\([^()]+\)\s*$")

ADMONITION_TITLES = {
    "note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important",
    "warning": "Warning", "caution": "Caution", "attention": "Attention", "danger": "Danger",
    "error": "Error", "seealso": "See also", "margin": "", "sidebar": "", "topic": "",
    "epigraph": "", "admonition": "", "highlights": "", "pull-quote": "",
}
# sphinx-design and docutils containers: their title (if any) in bold, then their content.
CONTAINERS = {"div", "container", "table", "grid", "grid-item", "grid-item-card", "card",
              "tab-set", "tab-item", "rubric", "only"}
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


class Converter:
    """Converts the MyST Markdown of one page; ``headings`` numbers its headings as the site does."""

    def __init__(self, resolver: Resolver, headings: list[str] | None = None):
        self.resolver = resolver
        self.headings = list(headings or [])
        self.heading_count = 0
        self.problem_count = 0

    # --- inline -------------------------------------------------------------------------------

    def inline(self, text: str) -> str:
        return INLINE.sub(self._inline_match, text)

    def _inline_match(self, match: re.Match) -> str:
        if match.group("code") is not None:
            return match.group(0)
        return self.role(match.group("role"), match.group("content"))

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
        i = 0
        while i < len(lines):
            line = lines[i]
            fence = FENCE.match(line)
            if fence and (fence.group("fence")[0] != ":" or fence.group("info").lstrip().startswith("{")):
                end = self._fence_end(lines, i, fence)
                indent = fence.group("indent")
                body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip()
                        for ln in lines[i + 1:end]]
                info = fence.group("info").strip()
                directive = re.match(r"\{([^}]+)\}\s*(.*)$", info)
                if directive is None:  # a plain code block: verbatim
                    buffer.extend(lines[i:end + 1])
                else:
                    result = self.directive(directive.group(1), directive.group(2), body)
                    for piece in result:
                        if isinstance(piece, str):
                            buffer.extend(_indent(piece, indent).split("\n"))
                        else:
                            flush()
                            pieces.append(piece)
                i = end + 1
                continue
            if TARGET.match(line) or line.startswith("%") or line.strip() == "+++":
                i += 1
                continue
            if line.startswith("$$"):  # display math: verbatim up to its closing $$
                end = i
                if line.strip() == "$$" or not line.rstrip().endswith("$$") or line.strip() == "$$$$":
                    end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip().endswith("$$")
                                or DISPLAY_MATH_LABEL.match(lines[j])), len(lines) - 1)
                block = lines[i:end + 1]
                label = DISPLAY_MATH_LABEL.match(block[-1])
                if label:  # "$$ (label)": MyST's equation label, nothing Jupyter knows
                    block[-1] = label.group(1)
                buffer.extend(block)
                i = end + 1
                continue
            heading = HEADING.match(line)
            if heading:
                number = self.headings[self.heading_count] if self.heading_count < len(self.headings) else ""
                self.heading_count += 1
                line = f"{heading.group(1)} {number}{heading.group(2)}"
            buffer.append(line)
            i += 1
        flush()
        # Roles inside the Markdown (never inside code blocks, which were kept verbatim).
        return [self._inline_outside_code(p) if isinstance(p, str) else p for p in pieces]

    def _inline_outside_code(self, text: str) -> str:
        out, chunk, in_code, fence_char, fence_len = [], [], False, "", 0
        for line in text.split("\n"):
            m = FENCE.match(line)
            if not in_code and m and m.group("fence")[0] != ":":
                out.append(self.inline("\n".join(chunk)) if chunk else None)
                chunk = []
                in_code, fence_char, fence_len = True, m.group("fence")[0], len(m.group("fence"))
                out.append(line)
                continue
            if in_code:
                out.append(line)
                if m and m.group("fence")[0] == fence_char and len(m.group("fence")) >= fence_len \
                        and not m.group("info").strip():
                    in_code = False
                continue
            chunk.append(line)
        if chunk:
            out.append(self.inline("\n".join(chunk)))
        text = "\n".join(s for s in out if s is not None)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")

    @staticmethod
    def _fence_end(lines: list[str], start: int, fence: re.Match) -> int:
        char, length = fence.group("fence")[0], len(fence.group("fence"))
        for j in range(start + 1, len(lines)):
            m = FENCE.match(lines[j])
            if m and m.group("fence")[0] == char and len(m.group("fence")) >= length \
                    and not m.group("info").strip():
                return j
        return len(lines)

    @staticmethod
    def _options(body: list[str]) -> tuple[dict, list[str]]:
        options: dict = {}
        if body and body[0].strip() == "---":
            end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
            if end is not None:
                options = yaml.safe_load("\n".join(body[1:end])) or {}
                return options, body[end + 1:]
        i = 0
        while i < len(body):
            m = re.match(r"^:([\w-]+):\s*(.*)$", body[i])
            if not m:
                break
            value = m.group(2).strip()
            if value[:1] in ('"', "'"):  # quoted, as MyST reads it: YAML
                value = yaml.safe_load(value)
            options[m.group(1)] = value if value != "" else True
            i += 1
        return options, body[i:]

    def _body(self, lines: list[str]) -> str:
        """Nested MyST converted to Markdown (must not ask for code cells)."""
        parts = []
        for piece in self.convert("\n".join(lines).strip("\n")):
            if isinstance(piece, str):
                parts.append(piece)
            else:
                self.resolver.warn("reader notebook: a figure inside another directive cannot "
                                   "become a code cell")
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
            return [details(_plain(self.inline(argument)) or "Details", self._body(content),
                            "open" in options)]
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
        # The page's order (bookext.quiz_order), so "(b)" names the same option in both.
        if all(isinstance(o, dict) for o in options):
            options = [options[i] for i in option_order(str(data.get("question", "")),
                                                        [str(o.get("text", "")) for o in options])]
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
        rule = "".join(f"`{t}`" if kind == "code" else md_escape(t)
                       for kind, t in problem_text.rule(answer, tolerance, unit))
        shown = problem_text.answer_text(answer, data.get("format"))
        solution = self.inline(str(data.get("solution", ""))).strip()
        answer_md = (f"**{md_escape(shown)}{' ' + md_escape(unit) if unit else ''}.** "
                     + (solution + " " if solution else "")
                     + "The folded code cell below computes it.")
        return "\n\n".join([
            f"**Problem {self.problem_count}.** {self.inline(str(data.get('question', ''))).strip()}",
            f"*{rule}*",
            details("Hint", self.inline(str(data.get("hint", "")))),
            details("Answer", answer_md),
        ])


def _indent(text: str, indent: str) -> str:
    if not indent:
        return text
    return "\n".join(indent + line if line else line for line in text.split("\n"))
