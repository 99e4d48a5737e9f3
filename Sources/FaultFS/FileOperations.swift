#if canImport(Glibc)
    import Glibc
#endif
import CFuse3

/// Opening, reading, writing, resizing and syncing files: passed through to the backing
/// file, with every change since the last sync remembered in its `DurableFile`.
extension FaultFileSystem {
    /// Flags the backing file must not see: the kernel already turned O_APPEND into offsets,
    /// O_TRUNC is done here so the lost bytes are saved first, and O_DIRECT would need
    /// aligned buffers that FUSE does not give.
    static let strippedFlags: Int32 = O_APPEND | O_TRUNC | fief_o_direct() | O_CREAT | O_EXCL

    func open(_ path: String, flags: Int32, mode: mode_t?) -> (Int, UInt64) {
        var fh: UInt64 = 0
        let r = perform(mode == nil ? .open : .create, path) { _ in
            var existed = stat()
            let isNew = mode != nil && lstat(backingPath(path), &existed) != 0
            let fd =
                mode.map {
                    Glibc.open(backingPath(path), (flags & ~FaultFileSystem.strippedFlags) | O_CREAT | O_CLOEXEC, $0)
                }
                ?? Glibc.open(backingPath(path), (flags & ~FaultFileSystem.strippedFlags) | O_CLOEXEC)
            guard fd >= 0 else { return failed() }
            if isNew {
                var st = stat()
                fstat(fd, &st)
                forgetDurableFile(ino: UInt64(st.st_ino))  // an inode number reused by the new file
                recordChange(.created(path: path, isDirectory: false, ino: UInt64(st.st_ino)))
            }
            lock.lock()
            let h = Handle(fd: fd, generation: generation, path: path)
            lock.unlock()
            if flags & O_TRUNC != 0 && flags & O_ACCMODE != O_RDONLY {
                let r = resize(h, to: 0)
                if r < 0 { Glibc.close(fd); return r }
            }
            fh = register(h)
            return 0
        }
        return (r, fh)
    }

    func read(_ path: String, fh: UInt64, into buffer: UnsafeMutableRawBufferPointer, offset: Int64) -> Int {
        guard let h = handle(fh) else { return -Int(EIO) }
        if h.isControl { return readControl(h, into: buffer, offset: offset) }
        return perform(.read, h.path, offset: offset, length: buffer.count) { actions in
            let n = pread(h.fd, buffer.baseAddress, buffer.count, off_t(offset))
            guard n >= 0 else { return failed() }
            for case .flipBits(let positions) in actions where n > 0 {
                for bit in positions { buffer[(bit / 8) % n] ^= UInt8(1 << (bit % 8)) }
            }
            return n
        }
    }

    func write(_ path: String, fh: UInt64, _ data: UnsafeRawBufferPointer, offset: Int64) -> Int {
        guard let h = handle(fh) else { return -Int(EIO) }
        if h.isControl { return writeControl(h, data) }
        return perform(
            .write, h.path, offset: offset, length: data.count,
            growth: { self.growth(to: offset + Int64(data.count), fd: h.fd, path: h.path) }
        ) { actions in
            var count = data.count
            for case .shortWrite(let keep) in actions { count = min(count, keep) }
            do {
                let file = try durableFile(h)
                file.lock.lock(); defer { file.lock.unlock() }
                try file.willWrite(offset: offset, count: count)
                let n = pwrite(h.fd, data.baseAddress, count, off_t(offset))
                guard n >= 0 else { return failed() }
                file.didWrite(seq: nextSeq(), offset: offset, bytes: Array(data[0..<n]))
                return n
            } catch let e as FaultFSError {
                if case .io(_, _, let code) = e { return -Int(code) }
                return -Int(EIO)
            } catch {
                return -Int(EIO)
            }
        }
    }

    /// Changes the size of the file behind `h`, saving the bytes a shrink takes away.
    func resize(_ h: Handle, to size: Int64) -> Int {
        do {
            let file = try durableFile(h)
            file.lock.lock(); defer { file.lock.unlock() }
            try file.willResize(to: size)
            guard ftruncate(h.fd, off_t(size)) == 0 else { return failed() }
            file.didResize(seq: nextSeq(), to: size)
            return 0
        } catch {
            return -Int(EIO)
        }
    }

    /// Bytes the file would grow by to reach `end`; asked only when a quota is armed.
    func growth(to end: Int64, fd: Int32?, path: String) -> Int64 {
        var st = stat()
        let found = fd.map { fstat($0, &st) } ?? lstat(backingPath(path), &st)
        return found == 0 ? max(0, end - Int64(st.st_size)) : 0
    }

    func truncate(_ path: String, fh: UInt64?, size: Int64) -> Int {
        if path == "/" + FaultFileSystem.controlName { return 0 }
        var target = fh.flatMap { handle($0) }
        if fh != nil && target == nil { return -Int(EIO) }
        return perform(
            .truncate, target?.path ?? path, offset: size,
            growth: { [target] in self.growth(to: size, fd: target?.fd, path: path) }
        ) { _ in
            var own: Int32 = -1
            if target == nil {
                own = Glibc.open(backingPath(path), O_WRONLY | O_CLOEXEC)
                guard own >= 0 else { return failed() }
                target = Handle(fd: own, generation: 0, path: path)
            }
            defer { if own >= 0 { Glibc.close(own) } }
            return resize(target!, to: size)
        }
    }

    func fallocate(_ path: String, fh: UInt64, mode: Int32, offset: Int64, length: Int64) -> Int {
        guard let h = handle(fh) else { return -Int(EIO) }
        let keepSize: Int32 = 1  // FALLOC_FL_KEEP_SIZE
        guard mode == 0 || mode == keepSize else { return -Int(EOPNOTSUPP) }
        var st = stat()
        let size = fstat(h.fd, &st) == 0 ? Int64(st.st_size) : 0
        let end = offset + length
        return perform(
            .fallocate, h.path, offset: offset, length: Int(length), growth: { mode == 0 ? max(0, end - size) : 0 }
        ) { _ in
            if mode == 0 && end > size {
                // Growing the size is the part a power cut can lose, so it is tracked as a resize.
                let r = resize(h, to: end)
                if r < 0 { return r }
            }
            return CFuse3.fallocate(h.fd, mode, off_t(offset), off_t(length)) == 0 ? 0 : failed()
        }
    }

    func fsync(_ path: String, fh: UInt64, dataOnly: Bool) -> Int {
        guard let h = handle(fh) else { return -Int(EIO) }
        if h.isControl { return 0 }
        return perform(.fsync, h.path) { actions in
            if actions.contains(.lieFsync) { return 0 }
            lock.lock()
            let file = files[h.ino]
            lock.unlock()
            if actions.contains(.failFsync) {
                // As Linux after a writeback error: the unsynced data never reaches the disk,
                // and the error is reported once.
                if let file {
                    file.lock.lock()
                    _ = try? file.powerCut(.dropAll)
                    file.lock.unlock()
                }
                return -Int(EIO)
            }
            guard (dataOnly ? fdatasync(h.fd) : Glibc.fsync(h.fd)) == 0 else { return failed() }
            var sizeChanged = false
            if let file {
                // Kept (clean) rather than dropped: reopening it for the next write would cost
                // more than the sync itself.
                file.lock.lock()
                // Asked only under an ext4 model: posix's syncs pay no extra fstat.
                if model != .posix { sizeChanged = file.durableSize != ((try? file.size()) ?? file.durableSize) }
                try? file.synced()
                file.lock.unlock()
            }
            if model.syncCommitsJournal(dataOnly: dataOnly, sizeChanged: sizeChanged) { commitJournal(except: h.ino) }
            return 0
        }
    }

    func getattr(_ path: String, fh: UInt64?, into st: inout stat) -> Int {
        if path == "/" + FaultFileSystem.controlName {
            st = stat()
            st.st_mode = S_IFREG | 0o600
            st.st_nlink = 1
            return 0
        }
        if FaultFileSystem.isHidden(path) { return -Int(ENOENT) }
        if let fh {
            guard let h = handle(fh) else { return -Int(EIO) }
            return fstat(h.fd, &st) == 0 ? 0 : failed()
        }
        return lstat(backingPath(path), &st) == 0 ? 0 : failed()
    }
}
