#pragma once
// The lock that serialises the writers of a user directory's slots (gpupart set, undo, profile apply,
// Slurm placement): an OFD write lock on "<user dir>/writers.lock", a file only its owner (and, under a
// setgid registry, the admin group) can open. A lock on the slot itself would not do: any user may open a
// slot to read it, and one read lock (fcntl F_RDLCK) held on it would keep every writer out for good.
// The slot's own write lock is still taken as a marker when no reader's lock is in the way: readers see a
// live writer by it (an odd seq is then a change in progress, not a writer that died), and a gpupart of
// the version before, which locked only the slot, is kept out by it.
#include <string>

namespace gpupart {

class WriterLock {
public:
    // Opens (creating it when the directory's owner or root runs this) the writers' lock of the directory
    // holding `slot_path`, waits up to `timeout_ms` for it, then marks `slot_fd`. RegistryError on failure.
    WriterLock(const std::string& slot_path, int slot_fd, int timeout_ms);
    ~WriterLock();
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;

    // Whether a live writer is changing the slot open as `slot_fd` now: its write-lock marker on the slot,
    // or, for readers who may open it, the directory's writers' lock. Read locks are readers, not writers.
    static bool writer_active(const std::string& slot_path, int slot_fd);

private:
    int lock_fd_ = -1;
    int slot_fd_ = -1;
    bool marked_ = false;
};

}  // namespace gpupart
