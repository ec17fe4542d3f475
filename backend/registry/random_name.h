/*
 * Unpredictable names for files made in directories others may write (a user directory's twin, a slot or
 * rules file's temporary name): a predictable name could be taken first. Shared by the registry's C files.
 */
#ifndef GPUPART_RANDOM_NAME_H
#define GPUPART_RANDOM_NAME_H

/* Fills `out` with 6 random letters and digits and a NUL (getrandom; no libc state to share with the
 * host program the shim is preloaded into). 0, or -EIO. */
int gpupart_random_suffix(char out[7]);

#endif /* GPUPART_RANDOM_NAME_H */
