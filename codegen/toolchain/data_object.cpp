/// \file
/// Data objects: one constant global per symbol, emitted by the X86 backend,
/// then the real bytes patched over zero-filled placeholders.

#include "codegen/toolchain/data_object.h"

#include "codegen/toolchain/llvm_support.h"
#include "codegen/toolchain/toolchain_info.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <cstring>
#include <map>
#include <set>

namespace aotc::toolchain {

namespace {

using ElfFile = llvm::object::ELFFile<llvm::object::ELF64LE>;

const char *const kSmallSection = ".rodata.aotc";
const char *const kLargeSection = ".lrodata.aotc";

bool isCIdentifier(const std::string &name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

uint64_t effectiveAlignment(const DataSymbol &symbol) {
  return symbol.alignment == 0 ? 1 : symbol.alignment;
}

Status validate(const std::vector<DataSymbol> &symbols) {
  std::set<std::string> seen;
  for (const DataSymbol &symbol : symbols) {
    if (!isCIdentifier(symbol.name))
      return makeError("data symbol '", symbol.name,
                       "': the name is not a C identifier");
    if (!seen.insert(symbol.name).second)
      return makeError("data symbol '", symbol.name, "' is defined twice");
    uint64_t alignment = effectiveAlignment(symbol);
    if ((alignment & (alignment - 1)) != 0 ||
        alignment > llvm::Value::MaximumAlignment)
      return makeError("data symbol '", symbol.name, "': alignment ",
                       symbol.alignment, " is not a power of two up to 2^",
                       llvm::Value::MaxAlignmentExponent);
    if (symbol.size != 0 && symbol.data == nullptr)
      return makeError("data symbol '", symbol.name, "': ", symbol.size,
                       " bytes but no data");
  }
  return Status::ok();
}

Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine() {
  detail::initializeX86Target();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kTargetTriple, error);
  if (!target)
    return makeError("writing a data object: no LLVM target for '",
                     kTargetTriple, "': ", error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kTargetTriple, "x86-64", "", options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, llvm::CodeGenOpt::None));
  if (!machine)
    return makeError("writing a data object: cannot create a target machine "
                     "for '",
                     kTargetTriple, "'");
  return machine;
}

/// Copies each symbol's bytes over its zero placeholder in \p object.
Status patchPayloads(std::string &object,
                     const std::vector<DataSymbol> &symbols) {
  auto fail = [](const std::string &what) {
    return makeError("writing a data object: the emitted object is not as "
                     "expected: ",
                     what);
  };
  llvm::Expected<ElfFile> elf =
      ElfFile::create(llvm::StringRef(object.data(), object.size()));
  if (!elf)
    return fail(llvm::toString(elf.takeError()));
  auto sections = elf->sections();
  if (!sections)
    return fail(llvm::toString(sections.takeError()));

  struct Location {
    uint64_t fileOffset;
    uint64_t size;
  };
  std::map<std::string, Location> locations;
  for (const ElfFile::Elf_Shdr &symtab : *sections) {
    if (symtab.sh_type != llvm::ELF::SHT_SYMTAB)
      continue;
    auto names = elf->getStringTableForSymtab(symtab, *sections);
    if (!names)
      return fail(llvm::toString(names.takeError()));
    auto syms = elf->symbols(&symtab);
    if (!syms)
      return fail(llvm::toString(syms.takeError()));
    for (const ElfFile::Elf_Sym &sym : *syms) {
      uint16_t index = sym.st_shndx;
      if (index == llvm::ELF::SHN_UNDEF || index >= sections->size())
        continue;
      const ElfFile::Elf_Shdr &section = (*sections)[index];
      if (section.sh_type != llvm::ELF::SHT_PROGBITS)
        continue;
      auto name = sym.getName(*names);
      if (!name)
        return fail(llvm::toString(name.takeError()));
      locations[name->str()] = {section.sh_offset + sym.st_value, sym.st_size};
    }
  }

  for (const DataSymbol &symbol : symbols) {
    if (symbol.size == 0)
      continue;
    auto it = locations.find(symbol.name);
    if (it == locations.end())
      return fail("symbol '" + symbol.name + "' is missing");
    const Location &location = it->second;
    if (location.size != symbol.size || location.fileOffset > object.size() ||
        object.size() - location.fileOffset < symbol.size)
      return fail("symbol '" + symbol.name + "' has the wrong size or place");
    std::memcpy(&object[location.fileOffset], symbol.data, symbol.size);
  }
  return Status::ok();
}

} // namespace

Expected<std::string> writeDataObject(const std::vector<DataSymbol> &symbols) {
  AOTC_RETURN_IF_ERROR(validate(symbols));
  AOTC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                        createTargetMachine());

  llvm::LLVMContext context;
  llvm::Module module("aotc_data", context);
  module.setTargetTriple(kTargetTriple);
  module.setDataLayout(machine->createDataLayout());
  llvm::Type *byteType = llvm::Type::getInt8Ty(context);
  uint64_t payloadBytes = 0;
  for (const DataSymbol &symbol : symbols) {
    // A zero placeholder costs no memory in LLVM (one fill fragment); the
    // bytes are copied in once the object exists. An explicit section keeps
    // it out of .bss, so the placeholder occupies file space.
    auto *type = llvm::ArrayType::get(byteType, symbol.size);
    auto *global = new llvm::GlobalVariable(
        module, type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantAggregateZero::get(type), symbol.name);
    global->setVisibility(llvm::GlobalValue::HiddenVisibility);
    global->setAlignment(llvm::Align(effectiveAlignment(symbol)));
    global->setSection(symbol.largeSection ? kLargeSection : kSmallSection);
    payloadBytes += symbol.size + effectiveAlignment(symbol);
  }

  std::string object;
  // Headers, symbol table and padding are small next to the payload.
  object.reserve(payloadBytes + 4096 + 64 * symbols.size());
  {
    detail::StringPWriteStream stream(object);
    llvm::legacy::PassManager passes;
    if (machine->addPassesToEmitFile(passes, stream, nullptr,
                                     llvm::CGFT_ObjectFile))
      return makeError("writing a data object: the X86 backend cannot emit "
                       "object files");
    passes.run(module);
  }
  AOTC_RETURN_IF_ERROR(patchPayloads(object, symbols));
  return object;
}

} // namespace aotc::toolchain
