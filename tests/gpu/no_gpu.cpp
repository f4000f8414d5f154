// Built when lab is configured without CUDA: there is nothing to test on a GPU, so skip (77).
int main() { return 77; }
