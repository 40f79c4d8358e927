# A tiny executed book for stopping execution (tests/test_ext_execution_stop.py): one page
# fails while another runs for a long time; every page's kernel writes its process id to
# $EXECUTION_TEST_MARKERS/<page>.pid, so the test can see that the stop killed it.
project = "Tiny executed book"
extensions = ["myst_nb", "bookext.execution"]
exclude_patterns = ["_build"]
nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
ffnbook_execution_jobs = 2
# More pages than jobs: kernels are forked from a template (bookext.execution.kernels.KernelPool).
ffnbook_kernel_preload = ["json"]
