# A tiny book for what bookext.builds.incremental does (tests/test_ext_incremental.py): pages with
# index entries and images, built again after no change and after an edit. Not executed.
project = "Tiny book"
extensions = ["myst_nb", "bookext.builds.incremental"]
myst_enable_extensions = ["colon_fence"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
source_suffix = {".md": "myst-nb"}
