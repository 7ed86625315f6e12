// Packages (.aotpkg): `aotc compile --package` writes one, Model::loadPackage
// runs it with no file extracted, bit-identical to the plain .so (weights in
// a side file mapped from the package, kept in the .so, or given by
// updates); the manifest says what the compile knows; `aotc run` and `aotc
// inspect` take packages; and every malformed, corrupt, truncated or
// foreign package is a clean aotc::Error that names the problem.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <aotc/model_desc.h>
#include <aotc/package.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace aotc::e2e;
using namespace aotc::e2e::twolayer;
namespace pkg = aotc::pkg;

namespace {

/// y = Relu(x @ w1^T + b1) @ w2 (w1 and w2 packed by the tiled build).
std::string buildModel(const Weights &w) {
  ModelBuilder mb("pkgmodel");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", kIn});
  mb.initializerF32("w1", {kHidden, kIn}, w.w1);
  mb.initializerF32("b1", {kHidden}, w.b1);
  mb.initializerF32("w2", {kHidden, kOut}, w.w2);
  auto &gemm = mb.node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1");
  ModelBuilder::attrInt(gemm, "transB", 1);
  mb.node("Relu", {"h"}, {"r"});
  mb.node("MatMul", {"r", "w2"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"N", kOut});
  return mb.bytes();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint32_t crcOf(const std::string &s) {
  return static_cast<uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef *>(s.data()), s.size()));
}

/// Runs a shell command; returns its exit code and output.
int runCmd(const std::string &cmd, std::string &out) {
  out.clear();
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A zip written byte by byte (stored entries), so that tests can craft
/// what no zip library would write: bad names, duplicates, symlinks, lies.
struct RawEntry {
  std::string name;
  std::string data;
  uint16_t method = 0;              ///< written as is (data not compressed)
  uint32_t mode = 0100644;          ///< Unix mode in the external attributes
  int64_t crcOverride = -1;         ///< a wrong CRC, when >= 0
  int64_t sizeOverride = -1;        ///< a wrong uncompressed size
};

std::string rawZip(const std::vector<RawEntry> &entries) {
  std::string out, cd;
  auto u16 = [](std::string &s, uint16_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  };
  auto u32 = [&](std::string &s, uint32_t v) {
    u16(s, static_cast<uint16_t>(v & 0xffff));
    u16(s, static_cast<uint16_t>(v >> 16));
  };
  for (const RawEntry &e : entries) {
    uint32_t crc = e.crcOverride >= 0 ? static_cast<uint32_t>(e.crcOverride)
                                      : crcOf(e.data);
    uint32_t size = e.sizeOverride >= 0 ? static_cast<uint32_t>(e.sizeOverride)
                                        : static_cast<uint32_t>(e.data.size());
    uint32_t offset = static_cast<uint32_t>(out.size());
    u32(out, 0x04034b50);
    u16(out, 20);
    u16(out, 0);
    u16(out, e.method);
    u16(out, 0);
    u16(out, 0x21);
    u32(out, crc);
    u32(out, static_cast<uint32_t>(e.data.size()));
    u32(out, size);
    u16(out, static_cast<uint16_t>(e.name.size()));
    u16(out, 0);
    out += e.name;
    out += e.data;
    u32(cd, 0x02014b50);
    u16(cd, 0x0314); // made by Unix
    u16(cd, 20);
    u16(cd, 0);
    u16(cd, e.method);
    u16(cd, 0);
    u16(cd, 0x21);
    u32(cd, crc);
    u32(cd, static_cast<uint32_t>(e.data.size()));
    u32(cd, size);
    u16(cd, static_cast<uint16_t>(e.name.size()));
    u16(cd, 0);
    u16(cd, 0);
    u16(cd, 0);
    u16(cd, 0);
    u32(cd, e.mode << 16);
    u32(cd, offset);
    cd += e.name;
  }
  uint32_t cdOffset = static_cast<uint32_t>(out.size());
  out += cd;
  u32(out, 0x06054b50);
  u16(out, 0);
  u16(out, 0);
  u16(out, static_cast<uint16_t>(entries.size()));
  u16(out, static_cast<uint16_t>(entries.size()));
  u32(out, static_cast<uint32_t>(cd.size()));
  u32(out, cdOffset);
  u16(out, 0);
  return out;
}

/// One compile of the test model in each packaging, shared by the tests.
struct Built {
  std::string dir;
  std::string plainSo;     ///< weights inside the .so
  std::string sidePkg;     ///< --package (weights side file)
  std::string sideSo;      ///< the .so written with it (-o)
  std::string embeddedPkg; ///< --package --embed-weights
  std::string weightlessPkg;
  std::string sourcesPkg; ///< --package-sources, no -o
  std::string clSource;   ///< --emit=cl of the same model
  std::string error;
};

const Built &built() {
  static Built b = [] {
    Built r;
    char pattern[] = "/tmp/aotc-pkgtest-XXXXXX";
    if (!mkdtemp(pattern)) {
      r.error = "mkdtemp failed";
      return r;
    }
    r.dir = pattern;
    // Removed at exit with everything the tests wrote there.
    static struct Remove {
      std::string dir;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    } remove{r.dir};
    std::string model = buildModel(makeWeights(0.5f));
    auto compile = [&](const std::string &extra) -> std::string {
      Compiled c = compileModel(model, "--dim N=1:64 " + extra);
      if (c.exitCode != 0)
        r.error += "compile " + extra + ": " + c.output + "\n";
      return c.soPath;
    };
    r.plainSo = compile("");
    r.sidePkg = r.dir + "/side.aotpkg";
    r.sideSo = compile("--package " + r.sidePkg);
    r.embeddedPkg = r.dir + "/embedded.aotpkg";
    compile("--package " + r.embeddedPkg + " --embed-weights");
    r.weightlessPkg = r.dir + "/weightless.aotpkg";
    compile("--package " + r.weightlessPkg + " --weightless");
    // Without -o: the .so goes to a temporary folder only.
    std::string onnx = r.dir + "/model.onnx";
    writeFile(onnx, model);
    r.sourcesPkg = r.dir + "/sources.aotpkg";
    std::string out;
    if (runCmd(std::string(AOTC_BIN) + " compile " + onnx +
                   " --dim N=1:64 --package " + r.sourcesPkg +
                   " --package-sources",
               out) != 0)
      r.error += "compile --package-sources: " + out;
    if (runCmd(std::string(AOTC_BIN) + " compile " + onnx +
                   " --dim N=1:64 --emit=cl 2>/dev/null",
               r.clSource) != 0)
      r.error += "emit cl failed";
    return r;
  }();
  return b;
}

std::vector<float> runModel(aotc::Model &m, int64_t n) {
  return m.run({input(n)})[0].toVector<float>();
}

/// The entries of a real package, as (name, bytes), manifest first.
std::vector<RawEntry> entriesOf(const std::string &path) {
  pkg::Package p = pkg::Package::open(path);
  std::vector<RawEntry> out;
  for (const pkg::ZipEntry &z : p.entries())
    out.push_back({z.name, p.read(z)});
  std::stable_partition(out.begin(), out.end(), [](const RawEntry &e) {
    return e.name == "manifest.json";
  });
  return out;
}

/// Writes \p entries as a package and expects Package::open (or, with
/// \p load, Model::loadPackage) to throw \p status with \p message in it.
void expectRejected(const std::vector<RawEntry> &entries,
                    aotc_status_t status, const std::string &message,
                    bool load = false) {
  static int counter = 0;
  std::string path =
      built().dir + "/crafted" + std::to_string(counter++) + ".aotpkg";
  writeFile(path, rawZip(entries));
  // The message also names the package.
  EXPECT_TRUE(refused(
      [&] {
        if (load)
          aotc::Model::loadPackage(path, deviceOptions());
        else
          pkg::Package::open(path);
      },
      {message, path}, status))
      << "accepted: " << message;
}

/// The manifest of \p entries, edited by \p edit.
std::vector<RawEntry>
withManifest(std::vector<RawEntry> entries,
             const std::function<void(nlohmann::json &)> &edit) {
  nlohmann::json j = nlohmann::json::parse(entries[0].data);
  edit(j);
  entries[0].data = j.dump();
  return entries;
}

class Package : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(built().error, ""); }
};

} // namespace

TEST_F(Package, SideFileWeightsRunBitIdenticalToThePlainSo) {
  aotc::Model plain = aotc::Model::load(built().plainSo, deviceOptions());
  aotc::Model packed =
      aotc::Model::loadPackage(built().sidePkg, deviceOptions());
  for (int64_t n : {1, 7, 64}) {
    std::vector<float> a = runModel(plain, n), b = runModel(packed, n);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << "batch " << n;
  }
  // Introspection comes from the packaged .so.
  EXPECT_EQ(packed.inputs()[0].name, "x");
  EXPECT_EQ(packed.symbols()[0].max, 64);
  // Weights can still be updated and read back.
  packed.updateConstants(asMap(makeWeights(0.5f)));
  std::vector<float> a = runModel(plain, 3), b = runModel(packed, 3);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST_F(Package, WeightsAreStoredAtAPageBoundaryAndMappedFromThePackage) {
  pkg::Package p = pkg::Package::open(built().sidePkg);
  const pkg::ZipEntry *w = p.find("weights");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->method, 0);
  EXPECT_EQ(w->dataOffset % 4096, 0u);
  // The entry is the side file the compile wrote beside -o, byte for byte.
  EXPECT_EQ(p.read(*w), readFile(built().sideSo + ".weights"));

  aotc::Model m = aotc::Model::loadPackage(built().sidePkg, deviceOptions());
  // Nothing was extracted: the .so is an in-memory file, the weights are a
  // mapping of the package itself.
  std::string maps = readFile("/proc/self/maps");
  EXPECT_NE(maps.find("/memfd:aotc:pkgmodel"), std::string::npos) << maps;
  std::string real = std::filesystem::canonical(built().sidePkg).string();
  EXPECT_NE(maps.find(real), std::string::npos) << maps;
}

TEST_F(Package, EmbeddedWeightsAndWeightlessRunBitIdentical) {
  aotc::Model plain = aotc::Model::load(built().plainSo, deviceOptions());
  std::vector<float> ref = runModel(plain, 5);

  aotc::Model embedded =
      aotc::Model::loadPackage(built().embeddedPkg, deviceOptions());
  std::vector<float> e = runModel(embedded, 5);
  EXPECT_EQ(std::memcmp(ref.data(), e.data(), ref.size() * sizeof(float)), 0);
  pkg::Package pe = pkg::Package::open(built().embeddedPkg);
  EXPECT_EQ(pe.manifest().weights, "embedded");
  EXPECT_EQ(pe.find("weights"), nullptr);

  aotc::Model weightless =
      aotc::Model::loadPackage(built().weightlessPkg, deviceOptions());
  EXPECT_THROW(runModel(weightless, 5), aotc::Error); // weights not given
  weightless.updateConstants(asMap(makeWeights(0.5f)), false, true);
  std::vector<float> w = runModel(weightless, 5);
  EXPECT_EQ(std::memcmp(ref.data(), w.data(), ref.size() * sizeof(float)), 0);
  EXPECT_EQ(pkg::Package::open(built().weightlessPkg).manifest().weights,
            "weightless");
}

TEST_F(Package, ManifestDescribesTheModelAndEveryEntry) {
  pkg::Package p = pkg::Package::open(built().sidePkg);
  const pkg::Manifest &m = p.manifest();
  EXPECT_EQ(m.formatVersion, pkg::kFormatVersion);
  EXPECT_EQ(m.aotcVersion, pkg::aotcVersion());
  EXPECT_EQ(m.arch, pkg::hostArch());
  EXPECT_EQ(m.os, "linux");
  EXPECT_EQ(m.abiVersion, AOTC_ABI_VERSION);
  EXPECT_EQ(m.descVersion, static_cast<uint32_t>(AOTC_MODEL_DESC_VERSION));
  EXPECT_EQ(m.deviceProfileName, "generic-avx2");
  EXPECT_NE(m.deviceProfile.find("\"vector_lanes\":8"), std::string::npos)
      << m.deviceProfile;
  EXPECT_TRUE(m.deviceExtensions.empty());
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].name, "x");
  EXPECT_EQ(m.inputs[0].dtype, "float32");
  EXPECT_EQ(m.inputs[0].shape, (std::vector<std::string>{"N", "5"}));
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].shape, (std::vector<std::string>{"N", "16"}));
  ASSERT_EQ(m.symbols.size(), 1u);
  EXPECT_EQ(m.symbols[0].name, "N");
  EXPECT_EQ(m.symbols[0].min, 1);
  EXPECT_EQ(m.symbols[0].max, 64);
  EXPECT_GE(m.numConstants, 3);
  EXPECT_EQ(m.weights, "side-file");
  // Every entry: its role, its size and CRC as the files on disk have them.
  ASSERT_EQ(m.entries.size(), 2u);
  const pkg::ManifestEntry *so = m.entry("model");
  const pkg::ManifestEntry *w = m.entry("weights");
  ASSERT_TRUE(so && w);
  std::string soBytes = readFile(built().sideSo);
  std::string wBytes = readFile(built().sideSo + ".weights");
  EXPECT_EQ(so->name, "model/" + std::filesystem::path(built().sideSo)
                                     .filename()
                                     .string());
  EXPECT_EQ(so->size, soBytes.size());
  EXPECT_EQ(so->crc32, crcOf(soBytes));
  EXPECT_EQ(w->size, wBytes.size());
  EXPECT_EQ(w->crc32, crcOf(wBytes));
  EXPECT_EQ(m.constantsBytes + 4096, wBytes.size());
  // Built without --prebuild: no program binaries.
  EXPECT_TRUE(m.programBinaries.empty());
  // And it round-trips through its JSON.
  pkg::Manifest again = pkg::Manifest::fromJson(m.toJson(), "test");
  EXPECT_EQ(again.toJson(), m.toJson());
}

TEST(PackageManifest, ProgramBinariesRoundTripAndMayBeAbsent) {
  pkg::Manifest m;
  m.aotcVersion = "0.1.0";
  m.arch = "x86_64";
  m.os = "linux";
  m.weights = "embedded";
  m.programBinaries.push_back({"dev A, driver 1: 10 bytes",
                               "platform: P\ndevice: dev A\nhost isa: avx2"});
  m.programBinaries.push_back({"dev B, driver 2: 20 bytes", "device: dev B"});
  pkg::Manifest again = pkg::Manifest::fromJson(m.toJson(), "test");
  ASSERT_EQ(again.programBinaries.size(), 2u);
  EXPECT_EQ(again.programBinaries[0].description, "dev A, driver 1: 10 bytes");
  EXPECT_EQ(again.programBinaries[0].deviceKey,
            "platform: P\ndevice: dev A\nhost isa: avx2");
  EXPECT_EQ(again.programBinaries[1].deviceKey, "device: dev B");
  EXPECT_EQ(again.toJson(), m.toJson());
  // A manifest written before the field (format 1 all the same) reads as
  // none; a mistyped one is an error naming it.
  auto j = nlohmann::ordered_json::parse(m.toJson());
  j["device"].erase("program_binaries");
  EXPECT_TRUE(
      pkg::Manifest::fromJson(j.dump(), "old").programBinaries.empty());
  auto expectRefused = [&](const nlohmann::ordered_json &binaries,
                           const std::string &message) {
    j["device"]["program_binaries"] = binaries;
    EXPECT_TRUE(
        refused([&] { pkg::Manifest::fromJson(j.dump(), "bad"); }, {message}))
        << "accepted: " << binaries.dump();
  };
  expectRefused("dev A", "field 'device.program_binaries' is not an array");
  expectRefused(nlohmann::ordered_json::array({{{"description", "x"}}}),
                "device.program_binaries[0].device_key' is missing");
}

TEST_F(Package, SourcesAreThoseTheCompilerEmits) {
  pkg::Package p = pkg::Package::open(built().sourcesPkg);
  std::map<std::string, std::string> sources;
  for (const pkg::ManifestEntry &e : p.manifest().entries)
    if (e.role == "source")
      for (const pkg::ZipEntry &z : p.entries())
        if (z.name == e.name)
          sources[e.name] = p.read(z);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources["sources/kernels.cl"], built().clSource);
  EXPECT_NE(sources["sources/wrapper.cpp"].find("aotc_model_desc"),
            std::string::npos);
  // The .so went to a temporary folder, which is gone; the package is named
  // after itself.
  EXPECT_NE(p.find("model"), nullptr);
  EXPECT_EQ(p.find("model")->name, "model/sources.so");
  aotc::Model m = aotc::Model::loadPackage(built().sourcesPkg, deviceOptions());
  EXPECT_EQ(runModel(m, 2).size(), 2u * kOut);
}

TEST_F(Package, CliRunsAndInspectsPackages) {
  std::string bin = AOTC_BIN, plainOut, pkgOut, inspect;
  ASSERT_EQ(runCmd(bin + " run " + built().plainSo + " --dim N=4", plainOut),
            0)
      << plainOut;
  ASSERT_EQ(runCmd(bin + " run " + built().sidePkg + " --dim N=4", pkgOut), 0)
      << pkgOut;
  // The same random inputs, the same printed outputs.
  auto outputLine = [](const std::string &text) {
    size_t at = text.find("output y:");
    return at == std::string::npos ? std::string("(none)")
                                   : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_EQ(outputLine(plainOut), outputLine(pkgOut));
  EXPECT_NE(outputLine(pkgOut), "(none)");
  ASSERT_EQ(runCmd(bin + " inspect " + built().sidePkg, inspect), 0)
      << inspect;
  for (const char *want :
       {"package: ", "format version 1", "target: x86_64/linux",
        "weights: side-file", "symbol N in [1, 64]",
        "entry model/", "stored", "input x: float32[N, 5]"})
    EXPECT_NE(inspect.find(want), std::string::npos) << want << "\n"
                                                     << inspect;
  // A broken package is a clean error of the CLI.
  std::string broken = built().dir + "/broken.aotpkg", out;
  std::string bytes = readFile(built().sidePkg);
  writeFile(broken, bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(runCmd(bin + " run " + broken, out), 1) << out;
  EXPECT_NE(out.find("aotc: error: package '" + broken + "'"),
            std::string::npos)
      << out;
}

TEST_F(Package, PlainLoadOfAPackageSaysHowToLoadIt) {
  EXPECT_TRUE(
      refused([&] { aotc::Model::load(built().sidePkg, deviceOptions()); },
              {"loadPackage"}, AOTC_ERROR_INVALID_ARGUMENT))
      << "loaded a package as a .so";
}

TEST_F(Package, RejectsBadEntryNames) {
  std::vector<RawEntry> good = entriesOf(built().sidePkg);
  auto with = [&](RawEntry extra) {
    std::vector<RawEntry> e = good;
    e.push_back(std::move(extra));
    return e;
  };
  expectRejected(with({"/etc/passwd", "x"}), AOTC_ERROR_INVALID_ARGUMENT,
                 "is an absolute path");
  expectRejected(with({"model/../../evil.so", "x"}),
                 AOTC_ERROR_INVALID_ARGUMENT, "has a '..' component");
  expectRejected(with({"model\\evil.so", "x"}), AOTC_ERROR_INVALID_ARGUMENT,
                 "contains a backslash");
  expectRejected(with({"other/file", "x"}), AOTC_ERROR_INVALID_ARGUMENT,
                 "is outside the package layout");
  expectRejected(with({"model/deep/file", "x"}), AOTC_ERROR_INVALID_ARGUMENT,
                 "is outside the package layout");
  expectRejected(with({"model/" + std::string(300, 'a'), "x"}),
                 AOTC_ERROR_INVALID_ARGUMENT, "is longer than 255 bytes");
  expectRejected(with({"model/", ""}), AOTC_ERROR_INVALID_ARGUMENT,
                 "is a directory");
  expectRejected(with({std::string("model/a\0b", 9), "x"}),
                 AOTC_ERROR_INVALID_ARGUMENT, "has a character outside");
  RawEntry link{"model/link.so", "/etc/passwd"};
  link.mode = 0120777;
  expectRejected(with(link), AOTC_ERROR_INVALID_ARGUMENT,
                 "is a symbolic link");
  expectRejected(with(good[1]), AOTC_ERROR_INVALID_ARGUMENT, "appears twice");
  RawEntry upper = good[1];
  for (char &c : upper.name)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  upper.name.replace(0, 6, "model/");
  expectRejected(with(upper), AOTC_ERROR_INVALID_ARGUMENT, "appears twice");
  // A well-formed name the manifest does not list.
  expectRejected(with({"sources/extra.cl", "x"}), AOTC_ERROR_INVALID_ARGUMENT,
                 "is not listed in manifest.json");
}

TEST_F(Package, RejectsEntriesThatDisagreeWithTheManifest) {
  std::vector<RawEntry> good = entriesOf(built().sidePkg);
  size_t soIndex = 0, wIndex = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    if (good[i].name.size() > 9 &&
        good[i].name.compare(good[i].name.size() - 8, 8, ".weights") == 0)
      wIndex = i;
    else if (good[i].name != "manifest.json")
      soIndex = i;
  }
  ASSERT_NE(soIndex, wIndex);
  // A corrupt byte: the CRC no longer matches.
  std::vector<RawEntry> e = good;
  e[soIndex].data[1000] ^= 0x55;
  e[soIndex].crcOverride = crcOf(good[soIndex].data);
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "is corrupt: CRC-32", true);
  e = good;
  e[wIndex].data[5000] ^= 0x55;
  e[wIndex].crcOverride = crcOf(good[wIndex].data);
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "is corrupt: CRC-32", true);
  // A consistent zip whose entry is not what the manifest says.
  e = good;
  e[soIndex].data += "tail";
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "manifest.json says");
  e = good;
  e[soIndex].data[1000] ^= 0x55;
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "has CRC-32");
  // Stored, yet the sizes differ.
  e = good;
  e[soIndex].sizeOverride = 12;
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "sizes differ");
  // Missing entries.
  e = good;
  e.erase(e.begin() + static_cast<long>(wIndex));
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT,
                 "which the archive does not hold");
  e = good;
  e.erase(e.begin());
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "no manifest.json");
  // Weights that cannot be mapped.
  e = good;
  e[wIndex].method = 8;
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "must be stored");
  // A method no package uses.
  e = good;
  e[soIndex].method = 12;
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "compression method 12");
}

TEST_F(Package, RejectsBadManifests) {
  std::vector<RawEntry> good = entriesOf(built().sidePkg);
  std::vector<RawEntry> e = good;
  e[0].data = "{ not json";
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "not valid JSON");
  expectRejected(withManifest(good, [](auto &j) { j.erase("target"); }),
                 AOTC_ERROR_INVALID_ARGUMENT, "field 'target' is missing");
  expectRejected(
      withManifest(good, [](auto &j) { j["target"]["arch"] = 7; }),
      AOTC_ERROR_INVALID_ARGUMENT, "field 'target.arch' is not a string");
  expectRejected(
      withManifest(good, [](auto &j) { j["format_version"] = 99; }),
      AOTC_ERROR_UNSUPPORTED, "package format version 99 is newer");
  expectRejected(withManifest(good,
                              [](auto &j) {
                                j["entries"][0]["role"] = "model";
                              }),
                 AOTC_ERROR_INVALID_ARGUMENT, "model entries");
  expectRejected(withManifest(good,
                              [](auto &j) {
                                j["entries"].push_back(j["entries"][0]);
                              }),
                 AOTC_ERROR_INVALID_ARGUMENT, "twice");
  // Deep nesting is refused before it is parsed (it would recurse).
  e = good;
  e[0].data = "{\"a\":" + std::string(200000, '[') +
              std::string(200000, ']') + "}";
  expectRejected(e, AOTC_ERROR_INVALID_ARGUMENT, "nested deeper than 32");
}

TEST_F(Package, RefusesAPackageForAnotherTarget) {
  std::vector<RawEntry> good = entriesOf(built().sidePkg);
  // Valid as a package (inspect can describe it), refused at load with
  // both values named.
  auto other = withManifest(good, [](auto &j) {
    j["target"]["arch"] = "aarch64";
  });
  expectRejected(other, AOTC_ERROR_UNSUPPORTED,
                 std::string("built for aarch64/linux, this host is ") +
                     pkg::hostArch() + "/linux",
                 true);
  expectRejected(withManifest(good,
                              [](auto &j) { j["target"]["os"] = "darwin"; }),
                 AOTC_ERROR_UNSUPPORTED, "x86_64/darwin", true);
  expectRejected(
      withManifest(good, [](auto &j) { j["target"]["abi_version"] = 2; }),
      AOTC_ERROR_UNSUPPORTED,
      "C ABI version 2, this runtime knows version 1", true);
  expectRejected(withManifest(good,
                              [](auto &j) {
                                j["target"]["model_desc_version"] = 999;
                              }),
                 AOTC_ERROR_UNSUPPORTED, "descriptor version 999", true);
}

TEST_F(Package, RejectsTruncatedAndForeignFiles) {
  std::string bytes = readFile(built().sidePkg);
  std::string dir = built().dir;
  auto expectOpenFails = [&](const std::string &name, const std::string &data,
                             const std::string &message) {
    std::string path = dir + "/" + name;
    writeFile(path, data);
    EXPECT_TRUE(refused(
        [&] { aotc::Model::loadPackage(path, deviceOptions()); }, {message}))
        << "accepted " << name;
  };
  // Cut anywhere: no end record, or entries past the end.
  for (size_t cut : {size_t{0}, size_t{10}, size_t{4096}, bytes.size() / 2,
                     bytes.size() - 30, bytes.size() - 1})
    expectOpenFails("cut" + std::to_string(cut) + ".aotpkg",
                    bytes.substr(0, cut), "package '");
  expectOpenFails("empty.aotpkg", "", "not a zip archive");
  expectOpenFails("text.aotpkg", std::string(5000, 'z'), "not a zip archive");
  // Central directory pointing past the file.
  std::string bad = bytes;
  bad[bad.size() - 3] = '\x7f'; // the top byte of its offset
  expectOpenFails("cdoffset.aotpkg", bad, "central directory");
  EXPECT_TRUE(
      refused([&] { pkg::Package::open(dir + "/does-not-exist.aotpkg"); }, {},
              AOTC_ERROR_NOT_FOUND))
      << "opened a missing file";
}

TEST_F(Package, RandomCorruptionsAreCleanErrors) {
  // Byte flips (mostly in the headers, the manifest and the central
  // directory, where a reader goes wrong) and cuts of a real package: every
  // one opens, reads and loads, or fails with aotc::Error; nothing else.
  std::string bytes = readFile(built().sidePkg);
  std::string path = built().dir + "/random.aotpkg";
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t bound) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return bound ? state % bound : 0;
  };
  pkg::Package good = pkg::Package::open(built().sidePkg);
  std::vector<std::pair<uint64_t, uint64_t>> hot = {{0, 4200},
                                                    {bytes.size() - 600,
                                                     bytes.size()}};
  for (const pkg::ZipEntry &z : good.entries())
    if (z.name == "manifest.json")
      hot.push_back({z.dataOffset - 60, z.dataOffset + z.compressedSize});
  int opened = 0, loaded = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    std::string b = bytes;
    if (i % 10 == 9) {
      b.resize(next(b.size()));
    } else {
      int flips = 1 + static_cast<int>(next(3));
      for (int f = 0; f < flips; ++f) {
        auto [lo, hi] = hot[next(hot.size())];
        b[lo + next(hi - lo)] ^= static_cast<char>(1 + next(255));
      }
    }
    writeFile(path, b);
    try {
      pkg::Package p = pkg::Package::open(path);
      for (const pkg::ZipEntry &z : p.entries())
        p.read(z);
      ++opened;
      aotc::Model m = aotc::Model::loadPackage(path, deviceOptions());
      ++loaded;
    } catch (const aotc::Error &) {
      ++refused;
    } catch (const std::exception &e) {
      ADD_FAILURE() << "case " << i << ": not an aotc::Error: " << e.what();
    }
  }
  std::printf("random corruptions: %d refused, %d opened, %d loaded\n",
              refused, opened, loaded);
  EXPECT_GT(refused, 300);
}

TEST_F(Package, WeightsFromADescriptorAreCheckedLikeTheSideFile) {
  // The runtime half of package loading, through the runner's options.
  std::string so = built().sideSo, weights = so + ".weights";
  int fd = ::open(weights.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  aotc::ModelOptions o = deviceOptions();
  o.weightsFd = fd;
  o.weightsSize = static_cast<uint64_t>(st.st_size);
  {
    aotc::Model m = aotc::Model::load(so, o);
    aotc::Model plain = aotc::Model::load(built().plainSo, deviceOptions());
    std::vector<float> a = runModel(plain, 2), b = runModel(m, 2);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  }
  auto expectFails = [&](aotc::ModelOptions opts, const std::string &so,
                         const std::string &message) {
    EXPECT_TRUE(refused([&] { aotc::Model::load(so, opts); }, {message},
                        AOTC_ERROR_INVALID_ARGUMENT))
        << "loaded with bad weights: " << message;
  };
  aotc::ModelOptions past = o;
  past.weightsOffset = 8;
  expectFails(past, so, "passes the end");
  aotc::ModelOptions shortSize = o;
  shortSize.weightsSize -= 64;
  expectFails(shortSize, so, "its header says");
  aotc::ModelOptions shifted = o;
  shifted.weightsOffset = 4096;
  shifted.weightsSize -= 4096;
  expectFails(shifted, so, "is not an aotc weights file");
  expectFails(o, built().plainSo, "has no weights side file");
  ::close(fd);
}

TEST_F(Package, CreateWithWeightsKeepsTheOptionsStructOfOldHosts) {
  void *h = dlopen(built().sideSo.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto init = reinterpret_cast<aotc_container_options_init_fn>(
      dlsym(h, "aotc_container_options_init"));
  auto create = reinterpret_cast<aotc_container_create_with_weights_fn>(
      dlsym(h, "aotc_container_create_with_weights"));
  auto destroy = reinterpret_cast<aotc_container_delete_fn>(
      dlsym(h, "aotc_container_delete"));
  auto lastError =
      reinterpret_cast<aotc_last_error_fn>(dlsym(h, "aotc_last_error"));
  ASSERT_TRUE(init && create && destroy && lastError);
  // The options struct is the first version's: a host built before
  // packages (bench/gpu/aotc_ctypes.py mirrors it) gives init exactly that
  // much memory, and init writes nothing past it.
  constexpr size_t kV1Size = offsetof(aotc_container_options_t, cache_dir) +
                             sizeof(void *);
  EXPECT_EQ(sizeof(aotc_container_options_t), kV1Size);
  std::vector<unsigned char> buf(kV1Size + 64, 0x7b);
  init(reinterpret_cast<aotc_container_options_t *>(buf.data()));
  for (size_t i = kV1Size; i < buf.size(); ++i)
    ASSERT_EQ(buf[i], 0x7b) << "byte " << i << " past the struct written";

  aotc_container_options_t o;
  init(&o);
  o.device = "cpu";
  aotc_container_t *c = reinterpret_cast<aotc_container_t *>(&o);
  EXPECT_EQ(create(&o, -1, 0, 0, &c), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(lastError()).find("weights_fd is -1"),
            std::string::npos)
      << lastError();
  std::string weights = built().sideSo + ".weights";
  int fd = ::open(weights.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(create(&o, fd, 0, std::filesystem::file_size(weights), &c),
            AOTC_OK)
      << lastError();
  ::close(fd); // the container keeps its mapping, not the descriptor
  EXPECT_NE(c, nullptr);
  destroy(c);
  dlclose(h);
}
