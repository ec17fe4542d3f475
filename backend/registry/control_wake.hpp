#pragma once
// Waking a process's shim after its control block changed. The shim's CUDA-graph re-mask thread sleeps in
// a futex wait on the slot's control.seq; the front end, which writes with pwrite and never maps a slot to
// read it, maps the slot's first page only to name that word to the kernel. The mapping is never read or
// written from user space, so a slot truncated meanwhile makes the wake fail (the kernel says EFAULT)
// instead of raising SIGBUS; a wake that cannot be made is covered by the thread's one-second timeout.
namespace gpupart {

// Wakes every thread waiting on control.seq of the slot open as `fd`. Returns false when it could not.
bool wake_control_waiters(int fd) noexcept;

}  // namespace gpupart
