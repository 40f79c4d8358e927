"""Every figure opens full size: its image is a link to its own SVG file.

A figure drawn for a book column is small on a phone (390 px), and a reader cannot
pinch-zoom an image inside a page that fits the screen well. Sphinx links an image to
its file only when the image was scaled (``html_scaled_image_link``); the book's figures
are not, so this does the same for every SVG figure: a tap or a click on the figure
opens the SVG alone, which the browser zooms freely. The link's name is the image's
alt text, so a screen reader hears the figure once.

It runs on ``doctree-resolved``, before the HTML builder copies the images: the link
points where the builder will put the file (``_images/`` and the unique name the
environment gave it at read time, ``env.images``).
"""

from __future__ import annotations

import posixpath

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.osutil import relative_uri


def link_figures_to_their_files(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    images = app.env.images
    imgpath = relative_uri(app.builder.get_target_uri(docname), "_images")
    for image in list(doctree.findall(nodes.image)):
        uri = image["uri"]
        if (
            not uri.endswith(".svg")
            or uri not in images
            or not isinstance(image.parent, nodes.figure)
            or "no-scaled-link" in image["classes"]
        ):
            continue
        link = nodes.reference(
            "", "", internal=True, classes=["ffn-figure-link"], refuri=posixpath.join(imgpath, images[uri][1])
        )
        image.replace_self(link)
        link.append(image)


def setup(app: Sphinx) -> dict:
    app.connect("doctree-resolved", link_figures_to_their_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
