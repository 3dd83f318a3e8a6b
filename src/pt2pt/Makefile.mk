# src/pt2pt: build fragment (included by the top Makefile.am)
