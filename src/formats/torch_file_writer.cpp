// The writing half of torch_file.h: the subset of torch.save's format that a state dict needs,
// written opcode by opcode so that Python's torch.load accepts it with weights_only=True (the
// default since PyTorch 2.6). torch::pickle_save tags containers with
// torch.jit._pickle.restore_type_tag, a global that weights_only refuses.
#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <map>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/torch_file.h"

namespace tts::formats {
namespace {

const char* storage_type(torch::Dtype dtype) {
  static const std::map<torch::Dtype, const char*> names{
      {torch::kFloat32, "FloatStorage"}, {torch::kFloat64, "DoubleStorage"},
      {torch::kFloat16, "HalfStorage"},  {torch::kBFloat16, "BFloat16Storage"},
      {torch::kInt64, "LongStorage"},    {torch::kInt32, "IntStorage"},
      {torch::kInt16, "ShortStorage"},   {torch::kInt8, "CharStorage"},
      {torch::kUInt8, "ByteStorage"},    {torch::kBool, "BoolStorage"}};
  auto it = names.find(dtype);
  TTS_CHECK(it != names.end(), "write_torch_file: tensors of type {} are not supported",
            c10::toString(dtype));
  return it->second;
}

class Pickler {
 public:
  std::string out;
  std::vector<torch::Tensor> storages;  // data/0, data/1, ... in order

  void value(const PickleValue& v) {
    using K = PickleValue::Kind;
    switch (v.kind) {
      case K::None:
        out += 'N';
        break;
      case K::Bool:
        out += v.boolean ? '\x88' : '\x89';
        break;
      case K::Int:
        integer(v.integer);
        break;
      case K::Float:
        real(v.real);
        break;
      case K::String:
        string(v.text);
        break;
      case K::Dict:
        out += '}';
        if (v.entries.empty()) break;
        out += '(';
        for (const auto& [key, item] : v.entries) {
          value(*key);
          value(*item);
        }
        out += 'u';
        break;
      case K::List:
        out += ']';
        if (v.items.empty()) break;
        out += '(';
        for (const auto& item : v.items) value(*item);
        out += 'e';
        break;
      case K::Tuple:
        out += '(';
        for (const auto& item : v.items) value(*item);
        out += 't';
        break;
      case K::Tensor:
        tensor(v.tensor);
        break;
      default:
        throw Error(fmt::format("write_torch_file: cannot write a {}", v.kind_name()));
    }
  }

 private:
  void little_endian(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      out += 'K';
      little_endian(static_cast<uint64_t>(v), 1);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out += 'J';
      little_endian(static_cast<uint64_t>(static_cast<uint32_t>(v)), 4);
    } else {
      out += "\x8a\x08";  // LONG1, 8 bytes of two's complement
      little_endian(static_cast<uint64_t>(v), 8);
    }
  }
  void real(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    out += 'G';
    for (int i = 7; i >= 0; --i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
  }
  void string(const std::string& s) {
    out += 'X';
    little_endian(s.size(), 4);
    out += s;
  }
  void int_tuple(c10::IntArrayRef values) {
    out += '(';
    for (int64_t v : values) integer(v);
    out += 't';
  }
  // torch._utils._rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict()), the storage
  // a persistent id ('storage', torch.XStorage, key, 'cpu', numel), as torch.save writes it.
  void tensor(const torch::Tensor& t) {
    torch::Tensor data = t.detach().to(torch::kCPU).contiguous();
    out += "ctorch._utils\n_rebuild_tensor_v2\n(";
    out += '(';
    string("storage");
    out += std::string("ctorch\n") + storage_type(data.scalar_type()) + "\n";
    string(std::to_string(storages.size()));
    string("cpu");
    integer(data.numel());
    out += "tQ";
    integer(0);
    int_tuple(data.sizes());
    int_tuple(data.strides());
    out += '\x89';
    out += "ccollections\nOrderedDict\n)R";
    out += "tR";
    storages.push_back(data);
  }
};

}  // namespace

void write_torch_file(const std::string& path, const PickleValue& root) {
  Pickler pickler;
  pickler.out = "\x80\x02";
  pickler.value(root);
  pickler.out += '.';
  std::string bytes;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&bytes](const void* data, size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
    writer.writeRecord("data.pkl", pickler.out.data(), pickler.out.size());
    writer.writeRecord("byteorder", "little", 6);
    for (size_t i = 0; i < pickler.storages.size(); ++i) {
      const torch::Tensor& storage = pickler.storages[i];
      writer.writeRecord("data/" + std::to_string(i), storage.data_ptr(),
                         static_cast<size_t>(storage.numel()) * storage.element_size());
    }
    writer.writeEndOfFile();
  }
  write_file_atomic(path, bytes);
}

namespace {
std::shared_ptr<PickleValue> pickle_value(PickleValue::Kind kind) {
  auto value = std::make_shared<PickleValue>();
  value->kind = kind;
  return value;
}
}  // namespace

std::shared_ptr<PickleValue> pickle_string(const std::string& text) {
  auto value = pickle_value(PickleValue::Kind::String);
  value->text = text;
  return value;
}

std::shared_ptr<PickleValue> pickle_int(int64_t integer) {
  auto value = pickle_value(PickleValue::Kind::Int);
  value->integer = integer;
  return value;
}

std::shared_ptr<PickleValue> pickle_float(double real) {
  auto value = pickle_value(PickleValue::Kind::Float);
  value->real = real;
  return value;
}

std::shared_ptr<PickleValue> pickle_tensor(const torch::Tensor& tensor) {
  auto value = pickle_value(PickleValue::Kind::Tensor);
  value->tensor = tensor;
  return value;
}

std::shared_ptr<PickleValue> pickle_dict(
    const std::vector<std::pair<std::string, std::shared_ptr<PickleValue>>>& entries) {
  auto value = pickle_value(PickleValue::Kind::Dict);
  for (const auto& [key, item] : entries) value->entries.emplace_back(pickle_string(key), item);
  return value;
}

}  // namespace tts::formats
