# src/netmod/ucx: the UCX network module
libmpi_la_SOURCES += \
	src/netmod/ucx/umpi_ucx.h \
	src/netmod/ucx/ucx.c \
	src/netmod/ucx/status.c \
	src/netmod/ucx/ucx_dtype.c \
	src/netmod/ucx/vm_events.c \
	src/netmod/ucx/umpi_ucx_rma.h \
	src/netmod/ucx/rma.c
