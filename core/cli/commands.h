// The inferscope-cli subcommands; each returns the process exit code.
#pragma once

namespace inferscope::cli {

int cmd_generate(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_devices(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_serve_sim(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_perplexity(int argc, char** argv);
int cmd_learn(int argc, char** argv);

}  // namespace inferscope::cli
