#include "tts/train/torch_pickle.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>

#include "tts/core/error.h"

namespace tts::train {
namespace {

using Value = std::shared_ptr<PickleValue>;

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

class Unpickler {
 public:
  Unpickler(caffe2::serialize::PyTorchStreamReader& reader, std::string file)
      : reader_(reader), file_(std::move(file)) {
    auto [data, size] = reader_.getRecord("data.pkl");
    bytes_.assign(static_cast<const char*>(data.get()), size);
  }

  Value run() {
    while (true) {
      auto op = static_cast<unsigned char>(next(1)[0]);
      if (op == '.') break;  // STOP
      dispatch(op);
    }
    TTS_CHECK(stack_.size() == 1, "{}: data.pkl ends with {} values on the stack, expected 1",
              file_, stack_.size());
    return stack_.back();
  }

 private:
  const char* next(size_t n) {
    TTS_CHECK(position_ + n <= bytes_.size(), "{}: data.pkl is truncated at byte {}", file_,
              position_);
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
  Value pop() {
    TTS_CHECK(!stack_.empty(), "{}: data.pkl pops an empty stack at byte {}", file_, position_);
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Value> pop_to_mark() {
    TTS_CHECK(!marks_.empty(), "{}: data.pkl has no MARK at byte {}", file_, position_);
    size_t mark = marks_.back();
    marks_.pop_back();
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
    auto value = make(PickleValue::Kind::Tuple);
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
        stack_.push_back(make(K::Dict));
        break;
      case ']':
        stack_.push_back(make(K::List));
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
        auto list = make(K::List);
        list->items = pop_to_mark();
        stack_.push_back(list);
        break;
      }
      case 'd': {
        auto dict = make(K::Dict);
        set_items(*dict, pop_to_mark());
        stack_.push_back(dict);
        break;
      }
      case 'a': {
        Value item = pop();
        append(*stack_.at(stack_.size() - 1), {item});
        break;
      }
      case 'e': {
        std::vector<Value> items = pop_to_mark();
        append(*stack_.at(stack_.size() - 1), items);
        break;
      }
      case 's': {
        Value value = pop(), key = pop();
        set_items(*stack_.at(stack_.size() - 1), {key, value});
        break;
      }
      case 'u': {
        std::vector<Value> items = pop_to_mark();
        set_items(*stack_.at(stack_.size() - 1), items);
        break;
      }
      case 'q':
        memo_[little_endian(1)] = stack_.at(stack_.size() - 1);
        break;  // BINPUT
      case 'r':
        memo_[little_endian(4)] = stack_.at(stack_.size() - 1);
        break;  // LONG_BINPUT
      case 0x94:
        memo_[memo_.size()] = stack_.at(stack_.size() - 1);
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
        stack_.push_back(stack_.at(stack_.size() - 1));
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

  Value reduce(const PickleValue& callable, const PickleValue& args) {
    const std::string& name = callable.text;
    const auto& a = args.items;
    if (name == "collections.OrderedDict" && a.empty()) return make(PickleValue::Kind::Dict);
    if ((name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") &&
        a.size() >= 4 && a[0]->kind == PickleValue::Kind::Tensor) {
      auto value = make(PickleValue::Kind::Tensor);
      value->tensor =
          a[0]->tensor.as_strided(int_tuple(*a[2], file_), int_tuple(*a[3], file_), a[1]->integer)
              .clone();
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
    TTS_CHECK(id.kind == PickleValue::Kind::Tuple && id.items.size() >= 5 &&
                  id.items[0]->text == "storage",
              "{}: data.pkl has a persistent id that is not a storage", file_);
    const std::string& key = id.items[2]->text;
    auto cached = storages_.find(key);
    if (cached != storages_.end()) return cached->second;
    torch::Dtype dtype = storage_dtype(id.items[1]->text, file_);
    auto [data, size] = reader_.getRecord("data/" + key);
    int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
    int64_t numel = static_cast<int64_t>(size) / element;
    auto value = make(PickleValue::Kind::Tensor);
    value->tensor = torch::empty({numel}, dtype);
    std::memcpy(value->tensor.data_ptr(), data.get(), static_cast<size_t>(numel * element));
    storages_[key] = value;
    return value;
  }

  caffe2::serialize::PyTorchStreamReader& reader_;
  std::string file_;
  std::string bytes_;
  size_t position_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value> memo_;
  std::unordered_map<std::string, Value> storages_;
};

}  // namespace

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

bool is_zip_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

PickleValue read_torch_file(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  TTS_CHECK(probe.good(), "'{}' cannot be read (missing or no permission)", path);
  TTS_CHECK(is_zip_file(path),
            "'{}' is in the legacy torch.save format (PyTorch before 1.6), which only Python "
            "reads; re-save it in the zip format with: python -c \"import torch; "
            "torch.save(torch.load('{}', map_location='cpu'), 'resaved.pt')\" and convert "
            "resaved.pt",
            path, path);
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    if (reader.hasRecord("byteorder")) {
      auto [data, size] = reader.getRecord("byteorder");
      std::string order(static_cast<const char*>(data.get()), size);
      TTS_CHECK(order == "little",
                "'{}' was saved on a {}-endian machine; re-save it on a "
                "little-endian one",
                path, order);
    }
    return *Unpickler(reader, path).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string reason = e.what();
    throw Error(fmt::format("'{}' is not a readable torch.save file: {}", path,
                            reason.substr(0, reason.find('\n'))));
  }
}

}  // namespace tts::train
