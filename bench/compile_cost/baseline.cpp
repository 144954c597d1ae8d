// The anchor: the standard headers every program includes anyway.
#include <span>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  const std::span<const std::string> all(args);
  return static_cast<int>(all.size());
}
