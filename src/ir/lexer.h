// Tokens of Relay text. Comments and the #[version = ...] header are skipped; the
// #[metadata] section ends the token stream and is handed over as raw text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::text {

enum class Tok : uint8_t {
  kEnd,
  kLocal,     // %name or %"any name"; text is the name
  kLocalNum,  // %12; index is the number
  kGlobal,    // @name or @"any name"
  kIdent,     // fn, nn.conv2d, Tensor, float32, True, nanf ...
  kNumber,    // 3, -0.5f, 1e-05f, 3i64; text as written
  kString,    // "NCHW"; text is the unescaped contents
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kSemi,
  kColon,
  kEqual,
  kArrow,     // ->
  kMinus,     // a '-' not starting a number (as in -inff)
  kQuestion,  // ? (unknown dimension)
  kDotIndex,  // .0 after an expression; index is the number
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  int64_t index = 0;
  int line = 1;
  int col = 1;
};

struct LexResult {
  std::vector<Token> tokens;  // always ends with kEnd
  bool has_metadata = false;
  std::string_view metadata;  // the text after #[metadata]
  int metadata_line = 1;
};

// Throws kiln::Error "<source>:<line>:<col>: ..." on characters that start no token,
// unterminated strings and comments.
LexResult lex(std::string_view text, const std::string& source);

// How a token reads in an error message: '%x', '(', number 3, end of input ...
std::string describe(const Token& token);

}  // namespace kiln::text
