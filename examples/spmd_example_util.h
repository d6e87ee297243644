// Shared by the multi-process examples (data_parallel_mlp.cc, tensor_parallel_block.cc):
// launching their ranks, deterministic data, f32 tensors.
#ifndef ACCY_EXAMPLES_SPMD_EXAMPLE_UTIL_H_
#define ACCY_EXAMPLES_SPMD_EXAMPLE_UTIL_H_

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "accy/tensor.h"

extern char** environ;

namespace accy_examples {

// `n` values in [-scale, scale) from a linear congruential generator seeded with `seed`.
inline std::vector<float> Uniform(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

// An f32 tensor of `dims` holding `values` (row-major).
inline accy::Tensor F32Tensor(std::vector<int64_t> dims, const std::vector<float>& values) {
  return *accy::Tensor::FromVector(*accy::TensorType::Create(accy::ElementType::kF32, dims),
                                   values);
}

// Starts `world` copies of this program as the ranks of one Gloo world on this host
// (ACCY_RANK, ACCY_WORLD_SIZE, ACCY_RENDEZVOUS=file:<temporary folder>, as mpirun or a shell
// loop would set them) and waits for all of them.
// Returns 0 when every rank exited 0, else 1 (naming how many failed).
inline int LaunchRanks(int world, const char* program_name) {
  std::string folder = (std::filesystem::temp_directory_path() / "accy-ranks-XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) {
    std::printf("FAIL: cannot create a rendezvous folder\n");
    return 1;
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("ACCY_RANK=" + std::to_string(rank));
    env.push_back("ACCY_WORLD_SIZE=" + std::to_string(world));
    env.push_back("ACCY_RENDEZVOUS=file:" + folder);
    env.push_back("ACCY_COLLECTIVE_TIMEOUT_MS=30000");
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string name = program_name;
    char* argv[] = {name.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0) {
      std::printf("FAIL: cannot start rank %d\n", rank);
      break;
    }
    children.push_back(pid);
  }
  int failed = world - static_cast<int>(children.size());
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  if (failed > 0) std::printf("FAIL: %d of %d ranks failed\n", failed, world);
  return failed == 0 ? 0 : 1;
}

}  // namespace accy_examples

#endif  // ACCY_EXAMPLES_SPMD_EXAMPLE_UTIL_H_
