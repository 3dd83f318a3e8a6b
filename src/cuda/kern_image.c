/*
 * The fatbin that nvcc built from kernels.cu, embedded in libmpi as read-only data (.incbin of the
 * file whose path configure put in UMPI_CUDA_FATBIN); cuModuleLoadData reads it from here at run
 * time. Without nvcc at build time there is no image, and the kernels are reported unavailable.
 */
#include "config.h"
#include "cuda/umpi_cuda_kern.h"

#ifdef UMPI_CUDA_FATBIN
/* Hidden: the image is libmpi's own, not an exported symbol. 64-byte alignment is more than the
 * driver asks of an image in memory. */
__asm__(".pushsection .rodata.umpi_cuda_fatbin,\"a\",@progbits\n"
        ".balign 64\n"
        ".globl umpi_cuda_fatbin\n"
        ".hidden umpi_cuda_fatbin\n"
        ".type umpi_cuda_fatbin, @object\n"
        "umpi_cuda_fatbin:\n"
        ".incbin \"" UMPI_CUDA_FATBIN "\"\n"
        ".globl umpi_cuda_fatbin_end\n"
        ".hidden umpi_cuda_fatbin_end\n"
        "umpi_cuda_fatbin_end:\n"
        ".popsection\n");
extern const unsigned char umpi_cuda_fatbin[], umpi_cuda_fatbin_end[];

const void *umpi_cuda_kern_image(size_t *size)
{
    *size = (size_t) (umpi_cuda_fatbin_end - umpi_cuda_fatbin);
    return umpi_cuda_fatbin;
}
#else
const void *umpi_cuda_kern_image(size_t *size)
{
    *size = 0;
    return NULL;
}
#endif
