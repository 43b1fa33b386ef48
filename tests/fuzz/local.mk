# libFuzzer targets (make fuzz, with clang) and their seed corpora; owned by the reliability work.
