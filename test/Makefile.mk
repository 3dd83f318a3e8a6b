# test: build fragment (included by the top Makefile.am)
include test/unit/Makefile.mk
