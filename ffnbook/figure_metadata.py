"""Keys of a figure's display metadata that the book's build reads (no plotting imported).

A :class:`ffnbook.plotting.BookFigure` displays as SVG; its display metadata also
carries the figure drawn for a phone under :data:`PHONE_METADATA` (metadata, not data:
a notebook front end, and myst-nb, shows an output's data and leaves unknown metadata
alone). The book's build (``bookext.website.phonefigures``) serves that drawing to narrow screens.
"""

#: The display metadata key of a figure's drawing for a phone (an SVG text).
PHONE_METADATA = "ffnbook_phone_svg"
