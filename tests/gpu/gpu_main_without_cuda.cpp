// Built when lab is configured without CUDA: there is no GPU code to test, so skip (exit 77).
#include <iostream>

int main() {
    std::cout << "skipping the GPU tests: this build has no CUDA backend (configure with -Dgpu=enabled)\n";
    return 77;
}
