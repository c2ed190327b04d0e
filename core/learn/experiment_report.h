// An experiment's results as a short Markdown report: the question, what was changed, the filled
// narration and conclusion, the table of each run's main figures, and the plots (image files the
// caller wrote beside the report, by caption and relative path).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/learn/experiment.h"
#include "core/learn/experiment_runner.h"

namespace inferscope {

using ReportImage = std::pair<std::string, std::string>;  // caption, path relative to the report

std::string experiment_markdown(const Experiment& experiment, const ExperimentResult& result, const std::string& model_name,
                                const std::vector<ReportImage>& images = {});

}  // namespace inferscope
