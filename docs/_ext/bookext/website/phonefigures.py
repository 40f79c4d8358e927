"""Figures drawn for a phone: on a narrow screen a figure shows its phone drawing.

A figure drawn for the page's column (about 7 inches) is shown at half its size on a
390 px phone, and its text with it: 5 to 8 CSS px. Every figure of ``ffnbook``
(:class:`ffnbook.plotting.BookFigure`) also draws itself for a phone: narrower, panels
stacked, text no smaller than 9 points (about 12 CSS px there), and its display data
carries that drawing in its metadata (:data:`ffnbook.figure_metadata.PHONE_METADATA`).

After the page is resolved, each figure image whose SVG is a glued figure's (myst-nb
names the file by the SHA-256 of its text) gets the phone drawing as a ``<picture>``
source for narrow screens (:data:`NARROW`); the drawing is written to ``_images/``
beside the other, named by its own SHA-256. The figure's link to its file
(:mod:`bookext.website.figurelinks`) stays around the picture: a tap opens the full drawing.
Other builders (the PDF) keep the one image.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.osutil import relative_uri

#: Where the phone drawing replaces the figure's: a viewport up to 40 rem (640 px) wide,
#: where the column is too narrow for the figure's text to stay at 11 CSS px or more.
NARROW = "(max-width: 40rem)"


PHONE = "ffn_phone"  # an image node's attribute: its phone drawing's address from the page


def visit_image(self, node: nodes.image) -> None:
    """Sphinx's image, inside a ``<picture>`` with the phone drawing where there is one."""
    if node.get(PHONE):
        self.body.append(f'<picture><source media="{NARROW}" srcset="{node[PHONE]}" type="image/svg+xml" />')
    type(self).visit_image(self, node)  # the writer class's own (this override is per instance)


def depart_image(self, node: nodes.image) -> None:
    type(self).depart_image(self, node)
    if node.get(PHONE):
        self.body.append("</picture>")


def _file_name(svg: str) -> str:
    """The name myst-nb gives an SVG output's file (its render_image): SHA-256 of the text."""
    return hashlib.sha256(os.linesep.join(svg.splitlines()).encode("utf-8")).hexdigest()


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value  # a notebook may split text in lines


def phone_drawings(glue_file: Path) -> dict[str, str]:
    """The page's glued figures with a phone drawing: desktop file name (no suffix) -> drawing."""
    if not glue_file.is_file():
        return {}
    # Imported here: importing ffnbook loads NumPy (~0.1 s), which a build that writes no page does without.
    from ffnbook.figure_metadata import PHONE_METADATA

    drawings = {}
    for output in json.loads(glue_file.read_text(encoding="utf-8")).values():
        svg, phone = output.get("data", {}).get("image/svg+xml"), output.get("metadata", {}).get(PHONE_METADATA)
        if svg and phone:
            drawings[_file_name(_text(svg))] = _text(phone)
    return drawings


def add_phone_drawings(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    drawings = phone_drawings(Path(app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json")
    if not drawings:
        return
    images = Path(app.outdir) / "_images"
    imgpath = relative_uri(app.builder.get_target_uri(docname), "_images")
    for image in list(doctree.findall(nodes.image)):
        phone = drawings.get(posixpath.splitext(posixpath.basename(image["uri"]))[0])
        if phone is None:
            continue
        name = f"{_file_name(phone)}.svg"
        target = images / name
        if not target.is_file():
            images.mkdir(parents=True, exist_ok=True)
            target.write_text(phone, encoding="utf-8")
        image[PHONE] = posixpath.join(imgpath, name)


def setup(app: Sphinx) -> dict:
    # The HTML writer's image, wrapped: a node around the image would break the figure's
    # link to its file (Sphinx's writer wants the image alone inside that link).
    app.add_node(nodes.image, override=True, html=(visit_image, depart_image))
    app.connect("doctree-resolved", add_phone_drawings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
