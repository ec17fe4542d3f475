// Claims on disk (fleet/claim_store.hpp) and the claims' registry directories (fleet/owned_directory.hpp): what a
// restarted plugin reads back, the lock, and what planted, oversized, corrupt or impossible files get.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet/claim_store.hpp"
#include "fleet/owned_directory.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

class ClaimStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/gpupart-claims-XXXXXX";
        ASSERT_NE(::mkdtemp(pattern), nullptr);
        root_ = pattern;
        dir_ = root_ + "/state";  // not there yet: the first change makes it
    }
    void TearDown() override {
        std::filesystem::permissions(root_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
        std::filesystem::remove_all(root_);
    }
    std::string file() const { return dir_ + "/" + gpu_key(h200()) + ".claims.json"; }
    void write(const std::string& path, const std::string& text) const { std::ofstream(path) << text; }
    // Prepares `uid` for `count` TPCs through a store opened for this change alone, as `gpupart k8s prepare` does.
    Claim prepare(const std::string& uid, int count) const {
        const ClaimStore store(dir_, ClaimStore::Access::change);
        ClaimBook book = store.load(gpu_key(h200()), real_tpcs(h200()));
        Claim claim = book.prepare(h200(), ClaimRequest{uid, "ns", "", ClaimUnit::tpcs, count}, "2026-11-24T10:00:00Z").claim;
        store.save(book);
        return claim;
    }
    std::string load_error() const {
        try {
            ClaimStore(dir_, ClaimStore::Access::read).load(gpu_key(h200()), real_tpcs(h200()));
        } catch (const UserError& error) {
            return error.what();
        }
        return "(no error)";
    }
    std::string root_;
    std::string dir_;
};

}  // namespace

TEST_F(ClaimStoreTest, ClaimsSurviveARestartAndARetryGivesTheSameTpcs) {
    const Claim a = prepare("a", 16);
    const Claim b = prepare("b", 9);
    const ClaimBook reread = ClaimStore(dir_, ClaimStore::Access::read).load(gpu_key(h200()), real_tpcs(h200()));
    ASSERT_EQ(reread.claims().size(), 2u);
    EXPECT_EQ(reread.claims()[0], a);
    EXPECT_EQ(reread.claims()[1], b);
    EXPECT_EQ(prepare("a", 16), a);  // the kubelet's retry after a plugin restart
    struct stat st {};
    ASSERT_EQ(::stat(file().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(ClaimStoreTest, ClaimsAreFoundWithoutTheGpusTopology) {
    const Claim a = prepare("a", 5);
    write(dir_ + "/notes.txt", "x");
    write(dir_ + "/GPU bad.claims.json", "{}");
    write(dir_ + "/.GPU-1.claims.json.0123.tmp", "{}");
    const ClaimStore store(dir_, ClaimStore::Access::read);
    EXPECT_EQ(store.gpu_keys(), std::vector<std::string>{gpu_key(h200())});
    // An unprepare after the GPU fell off the bus: the file's own record of its real TPCs is enough.
    const ClaimBook recorded = store.load_as_recorded(gpu_key(h200()));
    ASSERT_NE(recorded.find("a"), nullptr);
    EXPECT_EQ(*recorded.find("a"), a);
    EXPECT_EQ(recorded.real_tpcs(), real_tpcs(h200()));
    EXPECT_TRUE(store.load_as_recorded("GPU-11111111-2222-3333-4444-555555555555").claims().empty());
    EXPECT_THROW(store.load_as_recorded("../../etc/passwd"), UserError);
}

TEST_F(ClaimStoreTest, NothingRecordedReadsAsNoClaims) {
    EXPECT_TRUE(ClaimStore(dir_, ClaimStore::Access::read).load(gpu_key(h200()), real_tpcs(h200())).claims().empty());
    EXPECT_FALSE(std::filesystem::exists(dir_));  // reading makes nothing
}

TEST_F(ClaimStoreTest, AChangeHoldsTheLockUntilItEnds) {
    {
        const ClaimStore store(dir_, ClaimStore::Access::change);
        const int other = ::open((dir_ + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(other, 0);
        EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0);
        EXPECT_EQ(errno, EWOULDBLOCK);
        ::close(other);
    }
    const int other = ::open((dir_ + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_EQ(::flock(other, LOCK_EX | LOCK_NB), 0);
    ::close(other);
}

TEST_F(ClaimStoreTest, PlantedFilesAreRefusedNotFollowedOrRead) {
    prepare("a", 4);
    std::filesystem::remove(file());
    write(root_ + "/elsewhere.json", "{}");
    std::filesystem::create_symlink(root_ + "/elsewhere.json", file());
    EXPECT_NE(load_error().find("symbolic link"), std::string::npos) << load_error();
    EXPECT_THROW(prepare("b", 4), UserError);
    std::filesystem::remove(file());
    ASSERT_EQ(::mkfifo(file().c_str(), 0600), 0);  // opening it must not block
    EXPECT_NE(load_error().find("FIFO"), std::string::npos) << load_error();
    std::filesystem::remove(file());
    {
        std::ofstream huge(file());
        huge << std::string((1 << 20) + 1, ' ');
    }
    EXPECT_NE(load_error().find("more than"), std::string::npos) << load_error();
}

TEST_F(ClaimStoreTest, CorruptOrImpossibleContentIsRefusedInOneLine) {
    const Claim a = prepare("a", 8);
    std::ifstream in(file());
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto with = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        const std::size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        write(file(), text.replace(at, from.size(), to));
        return load_error();
    };
    EXPECT_NE(with("{", "[").find("not a JSON object"), std::string::npos);
    write(file(), good.substr(0, good.size() / 2));
    EXPECT_NE(load_error().find("not a JSON object"), std::string::npos);
    EXPECT_NE(with("\"version\": 2", "\"version\": 3").find("version 3 is not 2"), std::string::npos);
    EXPECT_NE(with("\"numbering\": \"tpc\"", "\"numbering\": \"bit\"").find("'numbering' is not tpc"), std::string::npos);
    EXPECT_NE(with(gpu_key(h200()), "GPU-11111111-2222-3333-4444-555555555555").find("it is for GPU"), std::string::npos);
    EXPECT_NE(with(real_tpcs(h200()).to_hex(), "0xff").find("real TPCs were 0-7"), std::string::npos);
    EXPECT_NE(with("\"count\": 8", "\"count\": 9").find("asked 9 TPCs but holds 8"), std::string::npos);
    EXPECT_NE(with("\"count\": 8", "\"count\": 1e9").find("'count' must be a whole number"), std::string::npos);
    EXPECT_NE(with("\"job\": \"k8s:ns/a\"", "\"job\": \"k8s:ns/b\"").find("is not the claim's"), std::string::npos);
    EXPECT_NE(with("\"uid\": \"a\"", "\"uid\": \"../../etc\"").find("not a Kubernetes uid"), std::string::npos);
    EXPECT_NE(with("\"unit\": \"tpcs\"", "\"unit\": \"sms\"").find("neither tpcs nor gpcs"), std::string::npos);
    // Two claims on one TPC: the second is a copy of the first under another uid.
    std::string twice = good;
    const std::size_t start = twice.find("    {");
    const std::size_t end = twice.find("    }", start) + 5;
    std::string copy = twice.substr(start, end - start);
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"uid\": \"a\"", "\"uid\": \"b\""},
                                   {"\"job\": \"k8s:ns/a\"", "\"job\": \"k8s:ns/b\""}})
        copy.replace(copy.find(from), from.size(), to);
    twice.insert(end, ",\n" + copy);
    write(file(), twice);
    EXPECT_NE(load_error().find("claim b shares TPCs"), std::string::npos) << load_error();
    EXPECT_EQ(load_error().find('\n'), std::string::npos);
    // A refused file is never overwritten by a change: a prepare fails the same way.
    EXPECT_THROW(prepare("c", 1), UserError);
    write(file(), good);
    EXPECT_EQ(prepare("a", 8), a);
}

// A file written before claims were TPC numbers (version 1) holds launch-descriptor bits: read through the GPU's
// map it names the TPCs it always meant; without the map it is refused, never read as numbers.
TEST_F(ClaimStoreTest, AFileOfDescriptorBitsIsReadThroughTheGpusMapOrRefused) {
    const TpcNumbering map = TpcNumbering::of(h200());
    const std::string key = gpu_key(h200());
    // gpc1 of the H200 was descriptor bits 9-16 (TPCs 1,9,17,25,32,39,46,53); claim "b" holds bit 0 (TPC 0).
    std::filesystem::create_directories(dir_);
    ::chmod(dir_.c_str(), 0755);
    write(file(), "{\"format\": \"gpupart-k8s-claims\", \"version\": 1, \"gpu\": \"" + key + "\", \"real_tpcs\": \"" +
                      map.to_bits(real_tpcs(h200())).to_hex() +
                      "\", \"claims\": [{\"uid\": \"a\", \"namespace\": \"ns\", \"name\": \"\", \"unit\": \"gpcs\", "
                      "\"count\": 1, \"tpcs\": \"0x1fe00\", \"job\": \"k8s:ns/a\", \"prepared\": \"2026-11-24T10:00:00Z\"}, "
                      "{\"uid\": \"b\", \"namespace\": \"ns\", \"name\": \"\", \"unit\": \"tpcs\", \"count\": 1, "
                      "\"tpcs\": \"0x1\", \"job\": \"k8s:ns/b\", \"prepared\": \"2026-11-24T10:00:00Z\"}]}\n");
    EXPECT_NE(load_error().find("launch-descriptor bits (version 1)"), std::string::npos) << load_error();
    EXPECT_EQ(load_error().find('\n'), std::string::npos);
    EXPECT_THROW(ClaimStore(dir_, ClaimStore::Access::read).load_as_recorded(key), UserError);
    const ClaimBook book = ClaimStore(dir_, ClaimStore::Access::read).load(key, real_tpcs(h200()), &map);
    ASSERT_NE(book.find("a"), nullptr);
    EXPECT_EQ(book.find("a")->tpcs, gpc_tpcs(h200(), 1));
    EXPECT_EQ(book.find("a")->tpcs.to_list(), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(book.find("b")->tpcs.to_list(), "0");
    const ClaimBook recorded = ClaimStore(dir_, ClaimStore::Access::read).load_as_recorded(key, &map);
    EXPECT_EQ(recorded.real_tpcs(), real_tpcs(h200()));
    EXPECT_EQ(recorded.claims(), book.claims());
    // The next change writes the file again in TPC numbers: it reads the same without the map.
    {
        const ClaimStore store(dir_, ClaimStore::Access::change);
        ClaimBook changed = store.load(key, real_tpcs(h200()), &map);
        changed.prepare(h200(), ClaimRequest{"c", "ns", "", ClaimUnit::tpcs, 1}, "2026-11-24T11:00:00Z");
        store.save(changed);
    }
    const ClaimBook rewritten = ClaimStore(dir_, ClaimStore::Access::read).load(key, real_tpcs(h200()));
    EXPECT_EQ(rewritten.find("a")->tpcs, gpc_tpcs(h200(), 1));
    EXPECT_TRUE((rewritten.find("c")->tpcs & (book.find("a")->tpcs | book.find("b")->tpcs)).empty());
    // A version 1 file with a bit that is no TPC of the GPU (a hole) is refused, not dropped.
    write(file(), "{\"format\": \"gpupart-k8s-claims\", \"version\": 1, \"gpu\": \"" + key + "\", \"real_tpcs\": \"" +
                      map.to_bits(real_tpcs(h200())).to_hex() +
                      "\", \"claims\": [{\"uid\": \"a\", \"namespace\": \"ns\", \"name\": \"\", \"unit\": \"tpcs\", "
                      "\"count\": 1, \"tpcs\": \"0x10\", \"job\": \"k8s:ns/a\", \"prepared\": \"2026-11-24T10:00:00Z\"}]}\n");
    try {
        ClaimStore(dir_, ClaimStore::Access::read).load(key, real_tpcs(h200()), &map);
        ADD_FAILURE() << "a hole was read";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("launch-descriptor bits 4, which are no TPC"), std::string::npos) << error.what();
    }
}

TEST_F(ClaimStoreTest, ADirectoryOthersCanChangeIsRefused) {
    std::filesystem::create_directory(dir_);
    ::chmod(dir_.c_str(), 0777);
    EXPECT_THROW(ClaimStore(dir_, ClaimStore::Access::change), UserError);
    ::chmod(dir_.c_str(), 0755);
    std::filesystem::rename(dir_, root_ + "/real");
    std::filesystem::create_directory_symlink(root_ + "/real", dir_);
    EXPECT_THROW(ClaimStore(dir_, ClaimStore::Access::read), UserError);
}

TEST_F(ClaimStoreTest, ClaimRegistriesAreMadeStickyAndRemovedWithoutFollowingLinks) {
    const std::string registries = root_ + "/registries";
    const std::string made = make_claim_registry(registries, "u-1");
    EXPECT_EQ(made, registries + "/u-1");
    struct stat st {};
    ASSERT_EQ(::stat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 01777u);
    EXPECT_EQ(make_claim_registry(registries, "u-1"), made);  // a retry keeps it
    // What a container could leave: the shim's own files, a link to a file and to a directory outside.
    std::filesystem::create_directories(made + "/u1000");
    write(made + "/u1000/12-34.slot", "x");
    std::filesystem::create_directories(root_ + "/outside");
    write(root_ + "/outside/keep", "keep");
    std::filesystem::create_symlink(root_ + "/outside/keep", made + "/u1000/link");
    std::filesystem::create_directory_symlink(root_ + "/outside", made + "/dirlink");
    EXPECT_TRUE(remove_claim_registry(registries, "u-1"));
    EXPECT_FALSE(std::filesystem::exists(made));
    EXPECT_TRUE(std::filesystem::exists(root_ + "/outside/keep"));
    EXPECT_FALSE(remove_claim_registry(registries, "u-1"));  // a second unprepare
    EXPECT_THROW(make_claim_registry(registries, "../x"), UserError);
    // Deeper than gpupart ever makes (what a container's process may leave): removed whole, with at most 8
    // levels open at once (deeper ones are moved up first), and nothing moved up is left beside it.
    const std::string deep = make_claim_registry(registries, "deep");
    std::filesystem::create_directories(deep + "/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20");
    write(deep + "/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/f", "x");
    std::filesystem::create_directories(deep + "/.gpupart-removing-1/x");  // a name taken before: not replaced
    EXPECT_TRUE(remove_claim_registry(registries, "deep"));
    EXPECT_FALSE(std::filesystem::exists(deep));
    struct stat top {};
    ASSERT_EQ(::stat(registries.c_str(), &top), 0);
    EXPECT_EQ(top.st_mode & 0777, 0700u) << "only the claims' containers reach their registries";
    // A claim registry that is a link is not removed through it.
    std::filesystem::create_directory_symlink(root_ + "/outside", registries + "/linked");
    EXPECT_THROW(remove_claim_registry(registries, "linked"), UserError);
    EXPECT_TRUE(std::filesystem::exists(root_ + "/outside/keep"));
}
