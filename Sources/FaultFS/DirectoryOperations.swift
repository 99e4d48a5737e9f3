#if canImport(Glibc)
    import Glibc
#endif

/// Operations on names: passed through to the backing directory, each change recorded in
/// the `Namespace` until its directory is synced.
extension FaultFileSystem {
    func recordChange(_ change: Namespace.Change) {
        lock.lock(); defer { lock.unlock() }
        seq += 1
        namespace.record(seq, change)
    }

    private func stash(_ path: String) -> String? {
        lock.lock(); defer { lock.unlock() }
        return namespace.stash(path)
    }

    /// The backing inode at `path`, 0 when there is none.
    func inode(_ path: String) -> UInt64 {
        var st = stat()
        return lstat(backingPath(path), &st) == 0 ? UInt64(st.st_ino) : 0
    }

    private func dropStash(_ s: String?) { if let s { Glibc.unlink(s) } }

    func mkdir(_ path: String, mode: mode_t) -> Int {
        perform(.mkdir, path) { _ in
            guard Glibc.mkdir(backingPath(path), mode) == 0 else { return failed() }
            recordChange(.created(path: path, isDirectory: true, ino: 0))
            return 0
        }
    }

    func rmdir(_ path: String) -> Int {
        perform(.rmdir, path) { _ in
            var st = stat()
            let mode = lstat(backingPath(path), &st) == 0 ? st.st_mode & 0o7777 : 0o755
            guard Glibc.rmdir(backingPath(path)) == 0 else { return failed() }
            recordChange(.removedDirectory(path: path, mode: mode))
            return 0
        }
    }

    func unlink(_ path: String) -> Int {
        perform(.unlink, path) { _ in
            var st = stat()
            let ino = lstat(backingPath(path), &st) == 0 ? UInt64(st.st_ino) : 0
            let kept = stash(path)
            guard Glibc.unlink(backingPath(path)) == 0 else { let r = failed(); dropStash(kept); return r }
            recordChange(.removed(path: path, stash: kept))
            if kept == nil { forgetDurableFile(ino: ino) }  // nothing can bring it back
            return 0
        }
    }

    func rename(_ from: String, _ to: String, flags: UInt32) -> Int {
        let noReplace: UInt32 = 1  // RENAME_NOREPLACE
        guard flags & ~noReplace == 0 else { return -Int(EINVAL) }
        return perform(.rename, from) { _ in
            var st = stat()
            let exists = lstat(backingPath(to), &st) == 0
            if exists && flags & noReplace != 0 { return -Int(EEXIST) }
            let replaced = exists ? stash(to) : nil
            guard Glibc.rename(backingPath(from), backingPath(to)) == 0 else {
                let r = failed(); dropStash(replaced); return r
            }
            recordChange(.renamed(from: from, to: to, replaced: replaced))
            if exists && model.renameOverCarriesData { renamedFileDataIsDurable(at: to) }
            lock.lock()
            for h in handles.values where h.path == from { h.path = to }
            lock.unlock()
            return 0
        }
    }

    /// ext4's `auto_da_alloc`: replacing a file by rename writes the new file's bytes before
    /// the rename commits. Treated as done at once, so no cut finds the name without them.
    private func renamedFileDataIsDurable(at path: String) {
        var st = stat()
        guard lstat(backingPath(path), &st) == 0 else { return }
        lock.lock()
        let file = files[UInt64(st.st_ino)]
        lock.unlock()
        guard let file else { return }
        file.lock.lock()
        try? file.synced()
        file.lock.unlock()
    }

    func link(_ from: String, _ to: String) -> Int {
        perform(.link, to) { _ in
            guard Glibc.link(backingPath(from), backingPath(to)) == 0 else { return failed() }
            recordChange(.created(path: to, isDirectory: false, ino: inode(to)))
            return 0
        }
    }

    func symlink(target: String, at path: String) -> Int {
        perform(.symlink, path) { _ in
            guard Glibc.symlink(target, backingPath(path)) == 0 else { return failed() }
            recordChange(.created(path: path, isDirectory: false, ino: inode(path)))
            return 0
        }
    }

    func fsyncdir(_ path: String, dataOnly: Bool) -> Int {
        perform(.fsyncdir, path) { actions in
            if actions.contains(.lieFsync) { return 0 }
            if actions.contains(.failFsync) { return -Int(EIO) }
            let fd = Glibc.open(backingPath(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return failed() }
            defer { Glibc.close(fd) }
            guard Glibc.fsync(fd) == 0 else { return failed() }
            if model.directorySyncCommitsJournal {
                commitJournal(except: nil)
            } else {
                lock.lock()
                namespace.synced(directory: path)
                forgetUnreachableFiles()
                lock.unlock()
            }
            return 0
        }
    }

    /// Files whose last name just became durably gone: nothing can reach them again, so
    /// their trackers (and the descriptors that keep the inodes alive) go too. Lock held.
    private func forgetUnreachableFiles() {
        for (ino, f) in files {
            var st = stat()
            if fstat(f.fd.rawValue, &st) == 0 && st.st_nlink == 0 { files[ino] = nil }
        }
    }

    /// A sync under an ext4 model commits the journal: every name change so far becomes
    /// durable and, under data=writeback, every other file's grown size (without its bytes).
    func commitJournal(except synced: UInt64?) {
        lock.lock()
        namespace.syncedAll()
        forgetUnreachableFiles()
        let others = model.journalCarriesSizeWithoutData ? files.filter { $0.key != synced }.map(\.value) : []
        lock.unlock()
        // File locks are taken before the filesystem's lock elsewhere, so never inside it.
        for f in others {
            f.lock.lock()
            try? f.sizeCommittedWithoutData()
            f.lock.unlock()
        }
    }

    /// Directories are opened only to learn their path: libfuse passes none to readdir and
    /// fsyncdir once a handle exists.
    func openDirectory(_ path: String) -> (Int, UInt64) {
        var st = stat()
        guard lstat(backingPath(path), &st) == 0 else { return (failed(), 0) }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return (-Int(ENOTDIR), 0) }
        lock.lock()
        let h = Handle(fd: -1, generation: generation, path: path)
        lock.unlock()
        return (0, register(h))
    }

    func directoryPath(_ path: String, fh: UInt64?) -> String {
        if !path.isEmpty { return path }
        lock.lock(); defer { lock.unlock() }
        return fh.flatMap { handles[$0]?.path } ?? "/"
    }

    /// The names in the directory at `path`, without FaultFS's own.
    func list(_ path: String) -> ([String], Int) {
        guard let dir = opendir(backingPath(path)) else { return ([], failed()) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if path == "/" && name == Namespace.stashName { continue }
            names.append(name)
        }
        return (names, 0)
    }

    func readlink(_ path: String, into buffer: UnsafeMutablePointer<CChar>, size: Int) -> Int {
        guard size > 0 else { return -Int(EINVAL) }
        let n = Glibc.readlink(backingPath(path), buffer, size - 1)
        guard n >= 0 else { return failed() }
        buffer[n] = 0
        return 0
    }

    func chmod(_ path: String, fh: UInt64?, mode: mode_t) -> Int {
        if let h = fh.flatMap({ handle($0) }) { return fchmod(h.fd, mode) == 0 ? 0 : failed() }
        return Glibc.chmod(backingPath(path), mode) == 0 ? 0 : failed()
    }

    func chown(_ path: String, fh: UInt64?, uid: uid_t, gid: gid_t) -> Int {
        if let h = fh.flatMap({ handle($0) }) { return fchown(h.fd, uid, gid) == 0 ? 0 : failed() }
        return lchown(backingPath(path), uid, gid) == 0 ? 0 : failed()
    }

    func utimens(_ path: String, fh: UInt64?, times: UnsafePointer<timespec>?) -> Int {
        if let h = fh.flatMap({ handle($0) }) { return futimens(h.fd, times) == 0 ? 0 : failed() }
        return utimensat(AT_FDCWD, backingPath(path), times, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : failed()
    }

    func statfs(into st: inout statvfs) -> Int {
        statvfs(backing, &st) == 0 ? 0 : failed()
    }

    func access(_ path: String, mode: Int32) -> Int {
        if path == "/" + FaultFileSystem.controlName { return 0 }
        if FaultFileSystem.isHidden(path) { return -Int(ENOENT) }
        return Glibc.access(backingPath(path), mode) == 0 ? 0 : failed()
    }

    func mknod(_ path: String, mode: mode_t, dev: dev_t) -> Int {
        perform(.create, path) { _ in
            guard Glibc.mknod(backingPath(path), mode, dev) == 0 else { return failed() }
            recordChange(.created(path: path, isDirectory: false, ino: inode(path)))
            return 0
        }
    }
}
