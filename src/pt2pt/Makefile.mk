# src/pt2pt: point-to-point semantics
libmpi_la_SOURCES += \
	src/pt2pt/umpi_p2p.h \
	src/pt2pt/send.c \
	src/pt2pt/bsend.c \
	src/pt2pt/recv.c \
	src/pt2pt/sendrecv.c \
	src/pt2pt/persistent.c \
	src/pt2pt/wait.c \
	src/pt2pt/status.c \
	src/pt2pt/p2p_dtype.c
