// ConvTranspose against a scatter reference written from ONNX's definition
// (each input element adds its kernel-weighted copy into the output), not
// from aotc's lowering (a zero-spread input correlated with the flipped
// kernel): strides, dilations, groups, pads, output_padding, output_shape
// (smaller and larger than the full result), bias, a symbolic batch run at
// 0, 1 and 3, 1-D and 2-D.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace aotc::e2e;

namespace {

struct Case {
  int64_t cin, m, group, h, w, kh, kw, sh, sw, dh, dw;
  std::vector<int64_t> pads;          // begin h, begin w, end h, end w
  std::vector<int64_t> outputPadding; // h, w
  std::vector<int64_t> outputShape;   // empty: from pads
  bool bias;
  bool oneD; // w, kw, sw, dw are 1 and the model is 1-D
};

float value(size_t i, float scale) {
  return std::sin(static_cast<float>(i) * 0.731f + scale) * scale;
}

/// out[n, g*Mg+m, i*s + k*d - pb] += x[n, g*Cg+c, i] * w[g*Cg+c, m, k].
std::vector<float> reference(const Case &cs, int64_t batch,
                             const std::vector<float> &x,
                             const std::vector<float> &wt,
                             const std::vector<float> &b, int64_t oh,
                             int64_t ow, int64_t pbh, int64_t pbw) {
  int64_t cg = cs.cin / cs.group, mg = cs.m / cs.group;
  int64_t mOut = cs.m;
  std::vector<float> y(batch * mOut * oh * ow, 0.0f);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ci = 0; ci < cs.cin; ++ci)
      for (int64_t i = 0; i < cs.h; ++i)
        for (int64_t j = 0; j < cs.w; ++j)
          for (int64_t mo = 0; mo < mg; ++mo)
            for (int64_t a = 0; a < cs.kh; ++a)
              for (int64_t c = 0; c < cs.kw; ++c) {
                int64_t r = i * cs.sh + a * cs.dh - pbh;
                int64_t q = j * cs.sw + c * cs.dw - pbw;
                if (r < 0 || r >= oh || q < 0 || q >= ow)
                  continue;
                int64_t g = ci / cg;
                int64_t o = g * mg + mo;
                y[((n * mOut + o) * oh + r) * ow + q] +=
                    x[((n * cs.cin + ci) * cs.h + i) * cs.w + j] *
                    wt[((ci * mg + mo) * cs.kh + a) * cs.kw + c];
              }
  if (cs.bias)
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t o = 0; o < mOut; ++o)
        for (int64_t p = 0; p < oh * ow; ++p)
          y[(n * mOut + o) * oh * ow + p] += b[o];
  return y;
}

TEST(ConvTranspose, MatchesTheScatterDefinition) {
  const Case cases[] = {
      {2, 3, 1, 3, 3, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, {0, 0}, {}, false, false},
      {2, 4, 1, 4, 5, 3, 2, 2, 3, 1, 1, {1, 0, 2, 1}, {1, 2}, {}, true, false},
      {4, 6, 2, 5, 3, 2, 3, 3, 2, 2, 1, {0, 1, 1, 0}, {2, 0}, {}, true, false},
      {3, 3, 3, 4, 4, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, {1, 1}, {}, false, false},
      // output_shape larger than the full result (bias alone at the end)
      // and smaller (cropped, the larger half at the start)
      {1, 2, 1, 3, 3, 3, 3, 3, 2, 1, 1, {0, 0, 0, 0}, {0, 0}, {10, 8}, true,
       false},
      {2, 2, 1, 4, 4, 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, {0, 0}, {6, 7}, false,
       false},
      // output_padding at the stride (allowed below the dilation), where
      // ONNX Runtime 1.20 misplaces values: the scatter definition rules
      {2, 3, 1, 3, 4, 2, 3, 1, 1, 2, 2, {0, 1, 1, 0}, {1, 1}, {}, true, false},
      // 1-D, odd sizes, stride 3 with dilation 2
      {3, 5, 1, 7, 1, 4, 1, 3, 1, 2, 1, {2, 0, 1, 0}, {1, 0}, {}, true, true},
  };
  int idx = 0;
  for (const Case &cs : cases) {
    ++idx;
    int64_t mg = cs.m / cs.group;
    int64_t fullH = cs.sh * (cs.h - 1) + cs.outputPadding[0] +
                    (cs.kh - 1) * cs.dh + 1;
    int64_t fullW = cs.sw * (cs.w - 1) + cs.outputPadding[1] +
                    (cs.kw - 1) * cs.dw + 1;
    int64_t pbh = cs.pads[0], pbw = cs.pads[1], oh, ow;
    if (cs.outputShape.empty()) {
      oh = fullH - cs.pads[0] - cs.pads[2];
      ow = fullW - cs.pads[1] - cs.pads[3];
    } else {
      oh = cs.outputShape[0];
      ow = cs.outputShape[1];
      auto begin = [](int64_t total) {
        return total < 0 ? 0 : total - total / 2;
      };
      pbh = begin(fullH - oh);
      pbw = begin(fullW - ow);
    }
    std::vector<float> wt(cs.cin * mg * cs.kh * cs.kw), b(cs.m);
    for (size_t i = 0; i < wt.size(); ++i)
      wt[i] = value(i, 0.9f);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = value(i, 2.5f);
    ModelBuilder mb("ct");
    std::vector<Dim> xDims = {"N", cs.cin, cs.h}, yDims = {"N", cs.m, oh};
    std::vector<int64_t> wDims = {cs.cin, mg, cs.kh};
    if (!cs.oneD) {
      xDims.push_back(cs.w);
      yDims.push_back(ow);
      wDims.push_back(cs.kw);
    }
    mb.input("x", onnx::TensorProto::FLOAT, xDims);
    mb.initializerF32("w", wDims, wt);
    std::vector<std::string> ins = {"x", "w"};
    if (cs.bias) {
      mb.initializerF32("b", {cs.m}, b);
      ins.push_back("b");
    }
    auto &node = mb.node("ConvTranspose", ins, {"y"}, "up");
    auto pick = [&](std::vector<int64_t> hw) {
      if (cs.oneD)
        hw.resize(1);
      return hw;
    };
    ModelBuilder::attrInts(node, "strides", pick({cs.sh, cs.sw}));
    ModelBuilder::attrInts(node, "dilations", pick({cs.dh, cs.dw}));
    ModelBuilder::attrInt(node, "group", cs.group);
    ModelBuilder::attrInts(node, "output_padding", pick(cs.outputPadding));
    if (cs.outputShape.empty())
      ModelBuilder::attrInts(node, "pads",
                             cs.oneD ? std::vector<int64_t>{cs.pads[0],
                                                            cs.pads[2]}
                                     : cs.pads);
    else
      ModelBuilder::attrInts(node, "output_shape", pick(cs.outputShape));
    mb.output("y", onnx::TensorProto::FLOAT, yDims);
    std::string what = "case " + std::to_string(idx);
    Compiled c = compileModel(mb.bytes());
    ASSERT_EQ(c.exitCode, 0) << what << ": " << c.output;
    aotc::Model model = loadModel(c.soPath);
    for (int64_t batch : {0, 1, 3}) {
      std::vector<float> x(batch * cs.cin * cs.h * cs.w);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = value(i, 1.3f);
      std::vector<float> want =
          reference(cs, batch, x, wt, b, oh, ow, pbh, pbw);
      std::vector<int64_t> shape = {batch, cs.cin, cs.h};
      std::vector<int64_t> outShape = {batch, cs.m, oh};
      if (!cs.oneD) {
        shape.push_back(cs.w);
        outShape.push_back(ow);
      }
      auto out = model.run({aotc::HostTensor::fromVector(shape, x)});
      ASSERT_EQ(out[0].shape(), outShape) << what << " batch " << batch;
      std::vector<float> got = out[0].toVector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4)
            << what << " batch " << batch << " element " << i;
    }
  }
}

TEST(ConvTranspose, BadAttributesNameTheNode) {
  ModelBuilder mb("ct");
  mb.input("x", onnx::TensorProto::FLOAT, {1, 2, 3, 3});
  mb.initializerF32("w", {2, 1, 2, 2}, std::vector<float>(8, 1.0f));
  auto &node = mb.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
  ModelBuilder::attrInts(node, "strides", {2, 2});
  ModelBuilder::attrInts(node, "output_padding", {2, 0}); // not below stride
  mb.output("y", onnx::TensorProto::FLOAT, {1, 1, "h", "w"});
  Compiled c = compileModel(mb.bytes());
  EXPECT_EQ(c.exitCode, 1) << c.output;
  EXPECT_NE(c.output.find("node 'up' (ConvTranspose)"), std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("output_padding"), std::string::npos) << c.output;
}

} // namespace
