# mpich-compat: build fragment (included by the top Makefile.am)
