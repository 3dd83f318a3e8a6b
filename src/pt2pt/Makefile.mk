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
	src/pt2pt/p2p_dtype.c \
	src/pt2pt/p2p_init.c
# device buffers: the protocol for a UCX that cannot touch GPU memory (umpi_p2p_gpu.h)
libmpi_la_SOURCES += \
	src/pt2pt/umpi_p2p_gpu.h \
	src/pt2pt/gpu_wire.h \
	src/pt2pt/gpu_xfer.h \
	src/pt2pt/gpu_xfer.c \
	src/pt2pt/gpu_send.c \
	src/pt2pt/gpu_recv.c \
	src/pt2pt/gpu_late.c \
	src/pt2pt/gpu_probe.c
