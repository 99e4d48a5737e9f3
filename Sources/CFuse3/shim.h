#ifndef FIEF_CFUSE3_SHIM_H
#define FIEF_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 312
#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>
#include <stdlib.h>
#include <sys/types.h>

// Linux calls that Swift's Glibc module leaves out (they need _GNU_SOURCE).
extern int fallocate(int fd, int mode, off_t offset, off_t len);
#if defined(__aarch64__)
#define FIEF_O_DIRECT 0200000
#else
#define FIEF_O_DIRECT 040000
#endif
static inline int fief_o_direct(void) { return FIEF_O_DIRECT; }

// fuse_new is a versioned macro in fuse3, which Swift cannot call; this wrapper pins the
// version FaultFS is written against.

static inline struct fuse *fief_fuse_new(int argc, char **argv,
                                         const struct fuse_operations *op, void *data) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    return fuse_new(&args, op, sizeof(*op), data);
}

static inline pid_t fief_fuse_caller_pid(void) {
    struct fuse_context *context = fuse_get_context();
    return context == NULL ? 0 : context->pid;
}

static inline void fief_fuse_set_flags(struct fuse_file_info *fi, int direct_io, int nonseekable) {
    fi->direct_io = direct_io;
    fi->nonseekable = nonseekable;
}

static inline void fief_fuse_configure(struct fuse_config *cfg) {
    // Inode numbers of the backing files, real unlinks of open files (no .fuse_hidden),
    // and no attribute caching: a power cut changes files behind the kernel's back.
    cfg->use_ino = 1;
    cfg->hard_remove = 1;
    cfg->nullpath_ok = 1;
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->kernel_cache = 0;
    cfg->auto_cache = 0;
    cfg->direct_io = 0;
}

#endif
