#include "registry_test_support.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry/registry_slot.h"

namespace gpupart::test {

TempRegistry::TempRegistry() {
    char name[] = "/dev/shm/gpupart-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = name;
    std::filesystem::permissions(dir, std::filesystem::perms(01777));
}

TempRegistry::~TempRegistry() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

std::string user_dir_in(const std::string& root) {
    char dir[512];
    if (gpupart_user_dir(root.c_str(), ::getuid(), 1, dir, sizeof dir) != 0) throw std::runtime_error("no user directory in " + root);
    return dir;
}

MappedSlot::MappedSlot(const std::string& path, bool writable) {
    const int fd = ::open(path.c_str(), writable ? O_RDWR : O_RDONLY);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    void* memory = ::mmap(nullptr, GPUPART_SLOT_FILE_SIZE, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (memory == MAP_FAILED) throw std::runtime_error("cannot map " + path);
    slot = static_cast<gpupart_slot_file*>(memory);
}

MappedSlot::~MappedSlot() { ::munmap(slot, GPUPART_SLOT_FILE_SIZE); }

gpupart_control_payload control_with(const char* allowed_hex, const char* real_hex, const char* gpu) {
    gpupart_control_payload control{};
    if (allowed_hex != nullptr) {
        gpupart_control_gpu& entry = control.gpus[0];
        gpupart_uuid_parse(gpu, &entry.uuid);
        gpupart_parse_hex_mask(allowed_hex, entry.allowed);
        gpupart_parse_hex_mask(real_hex, entry.real_tpcs);
        entry.flags = GPUPART_CONTROL_HAS_MASK;
        control.count = 1;
        control.generation = 1;
    }
    control.writer_pid = ::getpid();
    return control;
}

RegisteredChild::RegisteredChild(const std::string& dir, const char* tpcs_hex, const char* gpu, const char* job) {
    int ready[2];
    int hold[2];
    if (::pipe(ready) != 0 || ::pipe(hold) != 0) throw std::runtime_error("pipe failed");
    pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        ::close(hold[1]);
        const gpupart_control_payload initial = control_with(tpcs_hex, "0xffffffffffffffffffffffffffffffff", gpu);
        gpupart_slot_file* slot = nullptr;
        char path[512];
        char user_dir[512];
        int error = gpupart_user_dir(dir.c_str(), ::getuid(), 1, user_dir, sizeof user_dir);
        if (error == 0) error = gpupart_slot_create(user_dir, ::getpid(), gpupart_process_start_time(::getpid()), ::getuid(),
                                              "registered-child --test", "test", "", job, &initial, &slot, path, sizeof path);
        const char status = error == 0 ? 'y' : 'n';
        if (::write(ready[1], &status, 1) != 1) ::_exit(3);
        char byte;
        while (::read(hold[0], &byte, 1) > 0) {
        }
        ::_exit(0);
    }
    ::close(ready[1]);
    ::close(hold[0]);
    to_child = hold[1];
    char status = 'n';
    if (::read(ready[0], &status, 1) != 1 || status != 'y') throw std::runtime_error("child could not register");
    ::close(ready[0]);
}

void RegisteredChild::finish() {
    if (to_child >= 0) ::close(to_child);
    to_child = -1;
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    pid = -1;
}

RegisteredChild::~RegisteredChild() { finish(); }

int wait_exit_code(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gpupart::test
