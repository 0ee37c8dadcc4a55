#include <caffe2/serialize/inline_container.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>

#include "tts/core/checked.h"
#include "tts/core/error.h"
#include "tts/formats/torch_file.h"
#include "zip_directory.h"

namespace tts::formats {
namespace {

using Value = std::shared_ptr<PickleValue>;

// A state dict nests 3 to 5 levels (dict of dicts of tensors; our checkpoints add lists of
// names). Consumers walk values recursively (a file of 100,000 nested lists would overflow the
// stack), so every container built, however reached, may be at most this high.
constexpr size_t kMaxNesting = 100;
// torch tensors have at most 64 dimensions in practice (numpy's limit; ours are 1- to 3-D).
constexpr size_t kMaxTensorDimensions = 64;
// Every rebuilt tensor is a copy of (part of) a storage, and a pickle can rebuild the same storage
// any number of times with a few bytes each: the copies may total at most this many times the
// file's size (plus a floor for tiny files). A state dict copies each storage about once; tied
// weights saved under two names, twice.
constexpr int64_t kMaxCopiesOfTheFile = 4;
constexpr int64_t kCopyFloorBytes = int64_t{64} << 20;

Value make(PickleValue::Kind kind) {
  auto value = std::make_shared<PickleValue>();
  value->kind = kind;
  return value;
}

// torch.FloatStorage etc. (the typed-storage names torch.save still writes) -> element type.
torch::Dtype storage_dtype(const std::string& name, const std::string& file) {
  static const std::map<std::string, torch::Dtype> types{
      {"torch.FloatStorage", torch::kFloat32}, {"torch.DoubleStorage", torch::kFloat64},
      {"torch.HalfStorage", torch::kFloat16},  {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},    {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},   {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},    {"torch.BoolStorage", torch::kBool},
      {"torch.UntypedStorage", torch::kUInt8}};
  auto it = types.find(name);
  TTS_CHECK(it != types.end(),
            "{}: storage type '{}' is not supported (expected one of float, "
            "double, half, bfloat16, long, int, short, char, byte or bool storages)",
            file, name);
  return it->second;
}

std::vector<int64_t> int_tuple(const PickleValue& value, const std::string& file) {
  std::vector<int64_t> out;
  for (const auto& item : value.items) {
    TTS_CHECK(item->kind == PickleValue::Kind::Int, "{}: expected a tuple of ints, found a {}",
              file, item->kind_name());
    out.push_back(item->integer);
  }
  return out;
}

// Checks that no value built holds a cycle (a list that contains itself through the memo or DUP)
// and that none nests more than kMaxNesting containers deep, by the height of each (the longest
// chain of containers below it, shared containers included: a chain of shared nodes, each met
// first at a shallow depth, still counts its full height). Every container is checked, the ones
// reachable only through the memo or left on the stack too. No recursion: a work list of frames.
class NestingCheck {
 public:
  explicit NestingCheck(const std::string& file) : file_(file) {}

  void check(const PickleValue& top) {
    if (height_.count(&top) != 0) return;
    std::vector<Frame> path{{&top, 0, 0}};
    height_[&top] = kOpen;
    while (!path.empty()) {
      Frame& frame = path.back();
      if (frame.child == children(*frame.value)) {
        const size_t height = finish(frame);
        path.pop_back();
        if (!path.empty()) lift(path.back(), height);
        continue;
      }
      const PickleValue* child = child_at(*frame.value, frame.child++);
      if (child == nullptr || children(*child) == 0) continue;
      auto [it, inserted] = height_.emplace(child, kOpen);
      if (!inserted) {
        TTS_CHECK(it->second != kOpen,
                  "{}: data.pkl holds a {} that contains itself (a cycle through the pickle "
                  "memo); torch.save never writes one for a state dict",
                  file_, child->kind_name());
        lift(frame, it->second);
        continue;
      }
      require_height(path.size() + 1);  // the path alone is this high: stop early
      path.push_back({child, 0, 0});
    }
  }

 private:
  static constexpr size_t kOpen = 0;  // being walked; a finished container has height >= 1
  struct Frame {
    const PickleValue* value;
    size_t child;
    size_t below;  // the greatest height among the children walked so far
  };
  static size_t children(const PickleValue& v) { return v.items.size() + 2 * v.entries.size(); }
  static const PickleValue* child_at(const PickleValue& v, size_t i) {
    if (i < v.items.size()) return v.items[i].get();
    i -= v.items.size();
    const auto& entry = v.entries[i / 2];
    return (i % 2 == 0 ? entry.first : entry.second).get();
  }
  static void lift(Frame& frame, size_t child_height) {
    frame.below = std::max(frame.below, child_height);
  }
  size_t finish(const Frame& frame) {
    const size_t height = frame.below + 1;
    require_height(height);
    height_[frame.value] = height;
    return height;
  }
  void require_height(size_t height) const {
    TTS_CHECK(height <= kMaxNesting,
              "{}: data.pkl nests containers more than {} deep; a state dict nests 3 to 5, so the "
              "file is damaged or was not written for model weights",
              file_, kMaxNesting);
  }

  const std::string& file_;
  std::unordered_map<const PickleValue*, size_t> height_;
};

class Unpickler {
 public:
  Unpickler(caffe2::serialize::PyTorchStreamReader& reader, const ZipDirectory& directory,
            std::string file)
      : reader_(reader), directory_(directory), file_(std::move(file)) {
    directory_.check("data.pkl", file_);
    auto [data, size] = reader_.getRecord("data.pkl");
    bytes_.assign(static_cast<const char*>(data.get()), size);
  }
  Unpickler(const Unpickler&) = delete;
  Unpickler& operator=(const Unpickler&) = delete;
  // Whatever was built before a refusal (a cyclic value included) is taken apart one container at
  // a time, so no cycle leaks.
  ~Unpickler() {
    stack_.clear();
    memo_.clear();
    for (auto& value : containers_) {
      std::vector<Value>().swap(value->items);
      decltype(value->entries)().swap(value->entries);
    }
  }

  Value run() {
    while (true) {
      auto op = static_cast<unsigned char>(next(1)[0]);
      if (op == '.') break;  // STOP
      dispatch(op);
    }
    TTS_CHECK(stack_.size() == 1, "{}: data.pkl ends with {} values on the stack, expected 1",
              file_, stack_.size());
    Value root = stack_.back();
    NestingCheck nesting(file_);
    for (const Value& container : containers_) nesting.check(*container);
    containers_.clear();  // every value is sound (acyclic, shallow): the caller owns the root now
    return root;
  }

 private:
  const char* next(size_t n) {
    TTS_CHECK(n <= bytes_.size() - position_,
              "{}: data.pkl is truncated at byte {} (an opcode needs {} more bytes, {} are left)",
              file_, position_, n, bytes_.size() - position_);
    const char* p = bytes_.data() + position_;
    position_ += n;
    return p;
  }
  uint64_t little_endian(size_t n) {
    const char* p = next(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return v;
  }
  std::string line() {
    size_t end = bytes_.find('\n', position_);
    TTS_CHECK(end != std::string::npos, "{}: data.pkl is truncated in a GLOBAL", file_);
    std::string s = bytes_.substr(position_, end - position_);
    position_ = end + 1;
    return s;
  }
  Value make_container(PickleValue::Kind kind) {
    Value value = make(kind);
    containers_.push_back(value);
    return value;
  }
  PickleValue& top() {
    TTS_CHECK(!stack_.empty(), "{}: data.pkl uses the top of an empty stack at byte {}", file_,
              position_);
    return *stack_.back();
  }
  Value pop() {
    TTS_CHECK(!stack_.empty() && (marks_.empty() || stack_.size() > marks_.back()),
              "{}: data.pkl pops {} at byte {}", file_,
              stack_.empty() ? "an empty stack" : "below its MARK", position_);
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Value> pop_to_mark() {
    TTS_CHECK(!marks_.empty(), "{}: data.pkl has no MARK at byte {}", file_, position_);
    size_t mark = marks_.back();
    marks_.pop_back();
    TTS_CHECK(mark <= stack_.size(), "{}: data.pkl's MARK at byte {} is below the stack", file_,
              position_);
    std::vector<Value> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  void push_int(int64_t v) {
    auto value = make(PickleValue::Kind::Int);
    value->integer = v;
    stack_.push_back(value);
  }
  void push_text(PickleValue::Kind kind, size_t n) {
    auto value = make(kind);
    value->text.assign(next(n), n);
    stack_.push_back(value);
  }
  void push_tuple(std::vector<Value> items) {
    auto value = make_container(PickleValue::Kind::Tuple);
    value->items = std::move(items);
    stack_.push_back(value);
  }
  void set_items(PickleValue& dict, const std::vector<Value>& items) {
    TTS_CHECK(dict.kind == PickleValue::Kind::Dict && items.size() % 2 == 0,
              "{}: data.pkl sets items on a {}", file_, dict.kind_name());
    for (size_t i = 0; i < items.size(); i += 2) dict.entries.emplace_back(items[i], items[i + 1]);
  }
  void append(PickleValue& list, const std::vector<Value>& items) {
    TTS_CHECK(list.kind == PickleValue::Kind::List, "{}: data.pkl appends to a {}", file_,
              list.kind_name());
    list.items.insert(list.items.end(), items.begin(), items.end());
  }

  // Over 80 lines: one switch with a short case per pickle opcode, the whole machine in one place
  // (splitting it would scatter the opcodes a protocol-2 pickle may use over several functions).
  void dispatch(unsigned char op) {
    using K = PickleValue::Kind;
    switch (op) {
      case 0x80:
        next(1);
        break;  // PROTO
      case 0x95:
        next(8);
        break;  // FRAME
      case '(':
        marks_.push_back(stack_.size());
        break;
      case '}':
        stack_.push_back(make_container(K::Dict));
        break;
      case ']':
        stack_.push_back(make_container(K::List));
        break;
      case ')':
        push_tuple({});
        break;
      case 'N':
        stack_.push_back(make(K::None));
        break;
      case 0x88:
      case 0x89: {
        auto value = make(K::Bool);
        value->boolean = op == 0x88;
        stack_.push_back(value);
        break;
      }
      case 'K':
        push_int(static_cast<int64_t>(little_endian(1)));
        break;
      case 'M':
        push_int(static_cast<int64_t>(little_endian(2)));
        break;
      case 'J':
        push_int(static_cast<int32_t>(little_endian(4)));
        break;
      case 0x8a:
      case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        size_t n = op == 0x8a ? little_endian(1) : little_endian(4);
        TTS_CHECK(n <= 8, "{}: data.pkl has an integer of {} bytes (more than 64 bits)", file_, n);
        uint64_t v = n == 0 ? 0 : little_endian(n);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
        push_int(static_cast<int64_t>(v));
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        const char* p = next(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(p[i]);
        auto value = make(K::Float);
        std::memcpy(&value->real, &bits, sizeof bits);
        stack_.push_back(value);
        break;
      }
      case 'X':
        push_text(K::String, little_endian(4));
        break;  // BINUNICODE
      case 0x8c:
        push_text(K::String, little_endian(1));
        break;  // SHORT_BINUNICODE
      case 0x8d:
        push_text(K::String, little_endian(8));
        break;  // BINUNICODE8
      case 'T':
        push_text(K::String, little_endian(4));
        break;  // BINSTRING
      case 'U':
        push_text(K::String, little_endian(1));
        break;  // SHORT_BINSTRING
      case 'B':
        push_text(K::Bytes, little_endian(4));
        break;  // BINBYTES
      case 'C':
        push_text(K::Bytes, little_endian(1));
        break;  // SHORT_BINBYTES
      case 't':
        push_tuple(pop_to_mark());
        break;
      case 0x85:
      case 0x86:
      case 0x87: {
        size_t n = op - 0x84;
        std::vector<Value> items(n);
        for (size_t i = n; i-- > 0;) items[i] = pop();
        push_tuple(std::move(items));
        break;
      }
      case 'l': {
        auto list = make_container(K::List);
        list->items = pop_to_mark();
        stack_.push_back(list);
        break;
      }
      case 'd': {
        auto dict = make_container(K::Dict);
        set_items(*dict, pop_to_mark());
        stack_.push_back(dict);
        break;
      }
      case 'a': {
        Value item = pop();
        append(top(), {item});
        break;
      }
      case 'e': {
        std::vector<Value> items = pop_to_mark();
        append(top(), items);
        break;
      }
      case 's': {
        Value value = pop(), key = pop();
        set_items(top(), {key, value});
        break;
      }
      case 'u': {
        std::vector<Value> items = pop_to_mark();
        set_items(top(), items);
        break;
      }
      case 'q': {
        uint64_t key = little_endian(1);
        top();
        memo_[key] = stack_.back();
        break;  // BINPUT
      }
      case 'r': {
        uint64_t key = little_endian(4);
        top();
        memo_[key] = stack_.back();
        break;  // LONG_BINPUT
      }
      case 0x94:
        top();
        memo_[memo_.size()] = stack_.back();
        break;  // MEMOIZE
      case 'h':
      case 'j': {
        uint64_t key = little_endian(op == 'h' ? 1 : 4);
        auto it = memo_.find(key);
        TTS_CHECK(it != memo_.end(), "{}: data.pkl refers to memo {} before setting it", file_,
                  key);
        stack_.push_back(it->second);
        break;
      }
      case '0':
        pop();
        break;
      case '2':
        top();
        stack_.push_back(stack_.back());
        break;
      case '1':
        pop_to_mark();
        break;
      case 'c': {
        auto global = make(K::Global);
        std::string module = line();
        global->text = module + "." + line();
        stack_.push_back(global);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        Value name = pop(), module = pop();
        TTS_CHECK(name->kind == K::String && module->kind == K::String,
                  "{}: data.pkl's STACK_GLOBAL at byte {} names a {} in a {}, expected strings",
                  file_, position_, name->kind_name(), module->kind_name());
        auto global = make(K::Global);
        global->text = module->text + "." + name->text;
        stack_.push_back(global);
        break;
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ
        Value args = pop(), callable = pop();
        stack_.push_back(reduce(*callable, *args));
        break;
      }
      case 'b':
        pop();
        top();
        break;  // BUILD: object state (an OrderedDict's _metadata) is not needed
      case 'Q':
        stack_.push_back(persistent_load(*pop()));
        break;  // BINPERSID
      default:
        throw Error(
            fmt::format("{}: data.pkl uses pickle opcode 0x{:02x} at byte {}, which "
                        "torch.save does not write for state dicts",
                        file_, op, position_ - 1));
    }
  }

  // The one bounds check before any view of a storage is made: offset, sizes and strides come
  // from the file, so every element the view can reach must lie inside the storage, computed
  // without wrapping, and the copy may not be larger than the storage (a stride-0 view of one
  // float claiming 2^30 elements would otherwise allocate 4 GiB from a tiny file).
  torch::Tensor rebuild_tensor(const PickleValue& storage, const PickleValue& offset_value,
                               const PickleValue& size_value, const PickleValue& stride_value) {
    using K = PickleValue::Kind;
    TTS_CHECK(
        offset_value.kind == K::Int && size_value.kind == K::Tuple && stride_value.kind == K::Tuple,
        "{}: data.pkl rebuilds a tensor from a {} offset, {} sizes and {} strides; expected "
        "an int and two tuples of ints",
        file_, offset_value.kind_name(), size_value.kind_name(), stride_value.kind_name());
    std::vector<int64_t> sizes = int_tuple(size_value, file_);
    std::vector<int64_t> strides = int_tuple(stride_value, file_);
    const int64_t offset = offset_value.integer;
    const int64_t storage_numel = storage.tensor.numel();
    auto refuse = [&](const std::string& why) {
      return Error(fmt::format(
          "{}: data.pkl has a tensor view (offset {}, sizes ({}), strides ({})) over a storage of "
          "{} elements that {}; the file is damaged or was made to attack the reader",
          file_, offset, fmt::join(sizes, ", "), fmt::join(strides, ", "), storage_numel, why));
    };
    if (sizes.size() != strides.size()) throw refuse("does not have as many strides as sizes");
    if (sizes.size() > kMaxTensorDimensions) {
      throw refuse(fmt::format("has more than {} dimensions", kMaxTensorDimensions));
    }
    auto numel = checked_element_count(sizes);
    if (!numel) throw refuse("has a negative size or more elements than 64 bits count");
    if (offset < 0) throw refuse("starts before the storage");
    if (*numel > 0) {
      int64_t last = offset;  // the element the view's last index reaches
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (strides[d] < 0) throw refuse("has a negative stride");
        auto reach = checked_mul(sizes[d] - 1, strides[d]);
        auto sum = reach ? checked_add(last, *reach) : std::nullopt;
        if (!sum) throw refuse("reaches past 64-bit element positions");
        last = *sum;
      }
      if (last >= storage_numel) throw refuse("reaches past the storage's end");
      if (*numel > storage_numel) throw refuse("has more elements than its storage holds");
    } else if (offset > storage_numel) {
      throw refuse("starts past the storage's end");
    }
    const int64_t bytes = *numel * static_cast<int64_t>(storage.tensor.element_size());
    copied_bytes_ += bytes;  // no overflow: each term is at most a storage's size
    const int64_t budget =
        kMaxCopiesOfTheFile * static_cast<int64_t>(directory_.file_size()) + kCopyFloorBytes;
    TTS_CHECK(copied_bytes_ <= budget,
              "{}: data.pkl rebuilds tensors totalling more than {} bytes from a file of {} bytes "
              "(the same storage over and over); a state dict copies each storage about once",
              file_, budget, directory_.file_size());
    return storage.tensor.as_strided(sizes, strides, offset).clone();
  }

  Value reduce(const PickleValue& callable, const PickleValue& args) {
    using K = PickleValue::Kind;
    TTS_CHECK(callable.kind == K::Global && args.kind == K::Tuple,
              "{}: data.pkl calls something that is not a named function (a {}, with a {}) at "
              "byte {}; only named functions with a tuple of arguments can be called",
              file_, callable.kind_name(), args.kind_name(), position_);
    const std::string& name = callable.text;
    const auto& a = args.items;
    if (name == "collections.OrderedDict" && a.empty()) return make_container(K::Dict);
    if ((name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") &&
        a.size() >= 4 && a[0]->kind == K::Tensor) {
      auto value = make(K::Tensor);
      value->tensor = rebuild_tensor(*a[0], *a[1], *a[2], *a[3]);
      return value;
    }
    // libtorch's own pickler (torch::pickle_save, our checkpoints) tags containers with their
    // static type and wraps typed lists; the value is the first argument.
    if ((name == "torch.jit._pickle.restore_type_tag" ||
         name.rfind("torch.jit._pickle.build_", 0) == 0) &&
        !a.empty()) {
      return a[0];
    }
    if (name.rfind("torch._utils._rebuild_parameter", 0) == 0 && !a.empty() &&
        a[0]->kind == PickleValue::Kind::Tensor) {
      return a[0];
    }
    throw Error(
        fmt::format("{}: holds a Python object '{}', which only Python can rebuild; "
                    "save a state dict (plain tensors in dicts and lists) instead",
                    file_, name));
  }

  // ('storage', storage type, key, location, numel) -> the storage as a flat tensor.
  Value persistent_load(const PickleValue& id) {
    using K = PickleValue::Kind;
    TTS_CHECK(id.kind == K::Tuple && id.items.size() >= 5 && id.items[0]->kind == K::String &&
                  id.items[0]->text == "storage" &&
                  (id.items[1]->kind == K::Global || id.items[1]->kind == K::String) &&
                  id.items[2]->kind == K::String,
              "{}: data.pkl has a persistent id that is not ('storage', type, key, location, "
              "size); only tensor storages are read",
              file_);
    const std::string& key = id.items[2]->text;
    // torch.save names storages 0, 1, ...: a key is a record name inside the archive, never a
    // path.
    TTS_CHECK(!key.empty() && key.size() <= 64 &&
                  key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_") == std::string::npos,
              "{}: data.pkl names a storage '{}'; expected a short name of letters, digits and _",
              file_, key.substr(0, 64));
    auto cached = storages_.find(key);
    if (cached != storages_.end()) return cached->second;
    torch::Dtype dtype = storage_dtype(id.items[1]->text, file_);
    directory_.check("data/" + key, file_);
    auto [data, size] = reader_.getRecord("data/" + key);
    int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
    int64_t numel = static_cast<int64_t>(size) / element;
    auto value = make(PickleValue::Kind::Tensor);
    value->tensor = torch::empty({numel}, dtype);
    if (numel > 0) {
      std::memcpy(value->tensor.data_ptr(), data.get(), static_cast<size_t>(numel * element));
    }
    storages_[key] = value;
    return value;
  }

  caffe2::serialize::PyTorchStreamReader& reader_;
  const ZipDirectory& directory_;
  std::string file_;
  std::string bytes_;
  size_t position_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value> memo_;
  std::unordered_map<std::string, Value> storages_;
  std::vector<Value> containers_;  // every list, tuple and dict built, for the destructor
  int64_t copied_bytes_ = 0;       // the bytes of every tensor rebuilt so far
};

}  // namespace

PickleValue::~PickleValue() {
  std::vector<std::shared_ptr<PickleValue>> pending;
  auto take_children = [&pending](PickleValue& value) {
    for (auto& item : value.items) pending.push_back(std::move(item));
    for (auto& [key, entry] : value.entries) {
      pending.push_back(std::move(key));
      pending.push_back(std::move(entry));
    }
    value.items.clear();
    value.entries.clear();
  };
  take_children(*this);
  while (!pending.empty()) {
    std::shared_ptr<PickleValue> value = std::move(pending.back());
    pending.pop_back();
    // The last owner: its children move here first, so freeing it frees nothing below it.
    if (value != nullptr && value.use_count() == 1) take_children(*value);
  }
}

const PickleValue* PickleValue::find(const std::string& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k->kind == Kind::String && k->text == key) return v.get();
  }
  return nullptr;
}

std::string PickleValue::kind_name() const {
  static const char* const names[] = {"None", "bool",  "int",  "float",  "str",   "bytes",
                                      "list", "tuple", "dict", "tensor", "global"};
  return names[static_cast<int>(kind)];
}

namespace {

// libtorch's archive reader over the descriptor the checks read: every read is a pread of it, so
// what was checked is what is read (no second open by name). The size is fixed when the file is
// opened; a file cut short afterwards gives short reads, which the reader reports.
class DescriptorReadAdapter final : public caffe2::serialize::ReadAdapterInterface {
 public:
  // `fd` and `path` outlive the adapter (the reader is local to read_torch_file).
  DescriptorReadAdapter(const FileDescriptor& fd, const std::string& path, uint64_t size)
      : fd_(fd), path_(path), size_(size) {}
  size_t size() const override { return size_; }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    return read_at_into(fd_, path_, static_cast<int64_t>(pos), static_cast<char*>(buf), n);
  }

 private:
  const FileDescriptor& fd_;
  const std::string& path_;
  uint64_t size_;
};

}  // namespace

bool is_zip_file(const FileDescriptor& fd, const std::string& path) {
  return read_at(fd, path, 0, 4) == std::string("PK\x03\x04", 4);
}

bool is_zip_file(const std::string& path) {
  return is_zip_file(open_regular_file_for_read(path, Symlinks::kFollow), path);
}

PickleValue read_torch_file(const std::string& path, Symlinks symlinks) {
  return read_torch_file(open_regular_file_for_read(path, symlinks), path);
}

PickleValue read_torch_file(const FileDescriptor& fd, const std::string& path) {
  const auto size = static_cast<uint64_t>(file_size(fd, path));
  TTS_CHECK(is_zip_file(fd, path),
            "'{}' is in the legacy torch.save format (PyTorch before 1.6), which only Python "
            "reads; re-save it in the zip format with: python -c \"import torch; "
            "torch.save(torch.load('{}', map_location='cpu'), 'resaved.pt')\" and convert "
            "resaved.pt",
            path, path);
  const ZipDirectory directory = [&] {
    try {
      return ZipDirectory(fd, size);
    } catch (const Error& e) {
      throw Error(fmt::format("'{}' is not a readable torch.save file: {}", path, e.what()));
    }
  }();
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_shared<DescriptorReadAdapter>(fd, path, size));
    if (reader.hasRecord("byteorder")) {
      directory.check("byteorder", path);
      auto [data, record_size] = reader.getRecord("byteorder");
      std::string order(static_cast<const char*>(data.get()), record_size);
      TTS_CHECK(order == "little",
                "'{}' was saved on a {}-endian machine; re-save it on a "
                "little-endian one",
                path, order);
    }
    return *Unpickler(reader, directory, path).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string reason = e.what();
    throw Error(fmt::format("'{}' is not a readable torch.save file: {}", path,
                            reason.substr(0, reason.find('\n'))));
  }
}

}  // namespace tts::formats
