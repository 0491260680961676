// miles-ext-kernels first-party RMSNorm: argument checks for the tvm-ffi bindings.
// The Python layer validates shapes and layouts first; these checks keep a direct caller of
// the exported `run` from launching on arguments the kernels cannot read.
#pragma once

#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

#include "miles_rmsnorm/config.h"
#include "miles_rmsnorm/params.h"

namespace miles_rmsnorm {

using tvm::ffi::TensorView;

inline void* data_of(const TensorView& t) {
  return static_cast<char*>(t.data_ptr()) + t.byte_offset();
}

inline void require_cuda(const TensorView& t, const char* name, int device_id) {
  TVM_FFI_CHECK(t.device().device_type == kDLCUDA, ValueError)
      << "'" << name << "' must be a CUDA tensor";
  TVM_FFI_CHECK(t.device().device_id == device_id, ValueError)
      << "'" << name << "' is on cuda:" << t.device().device_id << ", expected cuda:"
      << device_id;
}

inline bool is_dtype(const TensorView& t, DLDataTypeCode code, int bits) {
  return t.dtype().code == code && t.dtype().bits == bits && t.dtype().lanes == 1;
}

// Activation dtype code (kBF16 / kFP16) of a tensor; anything else is an error.
inline int activation_dtype(const TensorView& t, const char* name) {
  if (is_dtype(t, kDLBfloat, 16)) return kBF16;
  if (is_dtype(t, kDLFloat, 16)) return kFP16;
  TVM_FFI_THROW(TypeError) << "'" << name << "' must be bfloat16 or float16";
  return -1;
}

inline int weight_dtype(const TensorView& w, int x_dtype) {
  if (is_dtype(w, kDLFloat, 32)) return kFP32;
  if (x_dtype == kBF16 && is_dtype(w, kDLBfloat, 16)) return kBF16;
  if (x_dtype == kFP16 && is_dtype(w, kDLFloat, 16)) return kFP16;
  TVM_FFI_THROW(TypeError) << "'w' must be float32 or the activation dtype";
  return -1;
}

inline void require_same_dtype(const TensorView& t, const TensorView& ref, const char* name) {
  TVM_FFI_CHECK(t.dtype().code == ref.dtype().code && t.dtype().bits == ref.dtype().bits,
                TypeError)
      << "'" << name << "' must have the activation dtype";
}

inline void require_dtype(const TensorView& t, DLDataTypeCode code, int bits, const char* name,
                          const char* what) {
  TVM_FFI_CHECK(is_dtype(t, code, bits), TypeError) << "'" << name << "' must be " << what;
}

inline void require_contiguous_numel(const TensorView& t, int64_t numel, const char* name) {
  TVM_FFI_CHECK(t.IsContiguous(), ValueError) << "'" << name << "' must be contiguous";
  TVM_FFI_CHECK(t.numel() >= numel, ValueError)
      << "'" << name << "' holds " << t.numel() << " elements, needs " << numel;
}

inline void require_aligned(const TensorView& t, int bytes, const char* name) {
  TVM_FFI_CHECK(reinterpret_cast<uintptr_t>(data_of(t)) % bytes == 0, ValueError)
      << "'" << name << "' must be " << bytes << "-byte aligned";
}

inline void require_row_strides(int64_t stride, int64_t head_stride, const char* name) {
  TVM_FFI_CHECK(stride % kHiddenMultiple == 0 && head_stride % kHiddenMultiple == 0, ValueError)
      << "row strides of '" << name << "' must be multiples of " << kHiddenMultiple
      << " elements, got " << stride << " and " << head_stride;
}

inline void require_hidden(int64_t hidden) {
  TVM_FFI_CHECK(hidden_supported(hidden), ValueError)
      << "hidden size " << hidden << " is not supported: it must be a multiple of "
      << kHiddenMultiple << " in [" << kMinHidden << ", " << kMaxHidden << "]";
}

inline void require_rows(int64_t rows, int64_t heads) {
  TVM_FFI_CHECK(rows > 0 && rows <= INT64_C(1) << 40, ValueError)
      << "rows must be positive, got " << rows;
  TVM_FFI_CHECK(heads > 0 && rows % heads == 0, ValueError)
      << "heads must be positive and divide rows (" << rows << " rows, " << heads << " heads)";
}

inline void require_grid(int64_t x, int64_t y, int64_t z) {
  TVM_FFI_CHECK(x > 0 && x <= INT64_C(0x7fffffff) && y == 1 && z == 1, ValueError)
      << "launch grid must be (x > 0, 1, 1), got (" << x << ", " << y << ", " << z << ")";
}

inline cudaStream_t current_stream(const TensorView& t) {
  return static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(t.device().device_type, t.device().device_id));
}

}  // namespace miles_rmsnorm
