/* The GPU kernels emulated on the CPU (kern_emu.cc), for the C unit tests and the fake driver. */
#ifndef KERN_EMU_H
#define KERN_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kern_emu_entry {
    const char *name;
    void (*run)(const void *args, uint64_t nthreads);  /* every thread 0..nthreads-1 in turn */
    size_t args_size;                                   /* the kernel's one argument, a struct */
};

int kern_emu_count(void);
const struct kern_emu_entry *kern_emu_at(int i);
const struct kern_emu_entry *kern_emu_find(const char *name);

enum { KERN_EMU_ADD, KERN_EMU_SUB, KERN_EMU_MUL, KERN_EMU_CMP };
/* r = a op b on long doubles in umpi's software x87; KERN_EMU_CMP writes an int (-1, 0, 1, 2). */
void kern_emu_f80(int op, const void *a, const void *b, void *r);

#ifdef __cplusplus
}
#endif

#endif
