# src/netmod/ucx: build fragment (included by the top Makefile.am)
