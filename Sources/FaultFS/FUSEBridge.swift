#if canImport(Glibc)
    import Glibc
#endif
import CFuse3

/// The C side: libfuse's operation table, each entry a capture-free function that finds the
/// one mounted `FaultFileSystem` and hands it Swift values. All pointer code lives here.
/// The file system this process serves; set once before the FUSE loop starts. A global,
/// because C function pointers cannot capture context.
nonisolated(unsafe) private var mounted: FaultFileSystem!

private func path(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
private func fh(_ fi: UnsafeMutablePointer<fuse_file_info>?) -> UInt64? { fi.map { $0.pointee.fh } }

enum FUSEBridge {
    static func operations() -> fuse_operations {
        var ops = fuse_operations()
        ops.`init` = { _, cfg in
            if let cfg { fief_fuse_configure(cfg) }
            return nil
        }
        ops.getattr = { p, st, fi in
            guard let st else { return -EINVAL }
            var s = stat()
            let r = mounted.getattr(path(p), fh: fh(fi), into: &s)
            if r == 0 { st.pointee = s }
            return Int32(r)
        }
        ops.access = { p, mode in Int32(mounted.access(path(p), mode: mode)) }
        ops.readlink = { p, buf, size in
            guard let buf else { return -EINVAL }
            return Int32(mounted.readlink(path(p), into: buf, size: size))
        }
        ops.open = { p, fi in
            guard let fi else { return -EINVAL }
            let name = path(p)
            if name == "/" + FaultFileSystem.controlName {
                fi.pointee.fh = mounted.register(
                    FaultFileSystem.Handle(fd: -1, generation: 0, path: name, isControl: true))
                fief_fuse_set_flags(fi, 1, 0)
                return 0
            }
            let (r, h) = mounted.open(name, flags: fi.pointee.flags, mode: nil)
            fi.pointee.fh = h
            return Int32(r)
        }
        ops.create = { p, mode, fi in
            guard let fi else { return -EINVAL }
            let (r, h) = mounted.open(path(p), flags: fi.pointee.flags, mode: mode)
            fi.pointee.fh = h
            return Int32(r)
        }
        ops.read = { p, buf, size, off, fi in
            guard let buf, let fi else { return -EINVAL }
            return Int32(
                mounted.read(
                    path(p), fh: fi.pointee.fh, into: UnsafeMutableRawBufferPointer(start: buf, count: size),
                    offset: Int64(off)))
        }
        ops.write = { p, buf, size, off, fi in
            guard let buf, let fi else { return -EINVAL }
            return Int32(
                mounted.write(
                    path(p), fh: fi.pointee.fh, UnsafeRawBufferPointer(start: buf, count: size), offset: Int64(off)))
        }
        ops.truncate = { p, size, fi in Int32(mounted.truncate(path(p), fh: fh(fi), size: Int64(size))) }
        ops.fallocate = { p, mode, off, len, fi in
            guard let fi else { return -EINVAL }
            return Int32(
                mounted.fallocate(path(p), fh: fi.pointee.fh, mode: mode, offset: Int64(off), length: Int64(len)))
        }
        ops.fsync = { p, datasync, fi in
            guard let fi else { return -EINVAL }
            return Int32(mounted.fsync(path(p), fh: fi.pointee.fh, dataOnly: datasync != 0))
        }
        ops.flush = { _, _ in 0 }
        ops.release = { _, fi in
            if let fi { mounted.release(fi.pointee.fh) }
            return 0
        }
        ops.statfs = { _, st in
            guard let st else { return -EINVAL }
            var s = statvfs()
            let r = mounted.statfs(into: &s)
            if r == 0 { st.pointee = s }
            return Int32(r)
        }
        ops.mkdir = { p, mode in Int32(mounted.mkdir(path(p), mode: mode)) }
        ops.rmdir = { p in Int32(mounted.rmdir(path(p))) }
        ops.unlink = { p in Int32(mounted.unlink(path(p))) }
        ops.rename = { from, to, flags in Int32(mounted.rename(path(from), path(to), flags: flags)) }
        ops.link = { from, to in Int32(mounted.link(path(from), path(to))) }
        ops.symlink = { target, p in Int32(mounted.symlink(target: path(target), at: path(p))) }
        ops.mknod = { p, mode, dev in Int32(mounted.mknod(path(p), mode: mode, dev: dev)) }
        ops.chmod = { p, mode, fi in Int32(mounted.chmod(path(p), fh: fh(fi), mode: mode)) }
        ops.chown = { p, uid, gid, fi in Int32(mounted.chown(path(p), fh: fh(fi), uid: uid, gid: gid)) }
        ops.utimens = { p, tv, fi in Int32(mounted.utimens(path(p), fh: fh(fi), times: tv)) }
        ops.opendir = { p, fi in
            guard let fi else { return -EINVAL }
            let (r, h) = mounted.openDirectory(path(p))
            fi.pointee.fh = h
            return Int32(r)
        }
        ops.releasedir = { _, fi in
            if let fi { mounted.release(fi.pointee.fh) }
            return 0
        }
        ops.readdir = { p, buf, filler, _, fi, _ in
            guard let filler else { return -EINVAL }
            let (names, r) = mounted.list(mounted.directoryPath(path(p), fh: fh(fi)))
            guard r == 0 else { return Int32(r) }
            for name in names {
                if name.withCString({ filler(buf, $0, nil, 0, fuse_fill_dir_flags(0)) }) != 0 { break }
            }
            return 0
        }
        ops.fsyncdir = { p, datasync, fi in
            Int32(mounted.fsyncdir(mounted.directoryPath(path(p), fh: fh(fi)), dataOnly: datasync != 0))
        }
        return ops
    }

    /// Mounts `fs` at `mountpoint` and serves it until unmounted or signalled (SIGTERM, SIGINT).
    static func serve(_ fs: FaultFileSystem, at mountpoint: String, threads: UInt32) throws {
        mounted = fs
        var ops = operations()
        let words = ["fief-faultfs", "-o", "fsname=faultfs,subtype=faultfs"]
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard let f = fief_fuse_new(Int32(words.count), &argv, &ops, nil) else {
            throw FaultFSError.mountFailed("libfuse could not set up the filesystem")
        }
        defer { fuse_destroy(f) }
        guard fuse_mount(f, mountpoint) == 0 else {
            throw FaultFSError.mountFailed("libfuse could not mount \(mountpoint) (see the message above)")
        }
        defer { fuse_unmount(f) }
        let session = fuse_get_session(f)
        guard fuse_set_signal_handlers(session) == 0 else {
            throw FaultFSError.mountFailed("cannot install signal handlers")
        }
        defer { fuse_remove_signal_handlers(session) }
        _ = RequestLoop(session: session!, maxWorkers: Int(threads), handOff: { fs.hasRules }).run()
        fs.shutdown()
    }
}
