// The MLIR token lexer of the StableHLO importer: identifiers with their sigils (%, @, #, ^, !),
// integer and float literals, string literals, punctuation, `//` comments skipped.
//
// Pulls one token at a time from a text the caller keeps alive; positions are 1-based line and
// column (lines offset by `first_line` for chunks of a split file). Not thread-safe; cheap to
// create.
#ifndef ACCY_SRC_STABLEHLO_LEXER_H_
#define ACCY_SRC_STABLEHLO_LEXER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

enum class TokenKind {
  kEof,
  kError,      // `value` holds the message
  kBareId,     // f32, stablehlo.add, func.func, x
  kPercentId,  // %0, %arg0 (value: without '%')
  kAtId,       // @main, @"quoted" (value: the name, unescaped)
  kHashId,     // #stablehlo, #loc3, #1 (value: without '#')
  kCaretId,    // ^bb0
  kBangId,     // !stablehlo.token
  kInteger,    // 42, 0x7FC00000
  kFloat,      // 1.5, 2.0e-3, 1e5
  kString,     // "text" (value: unescaped)
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLSquare,
  kRSquare,
  kLess,
  kGreater,
  kComma,
  kColon,
  kEqual,
  kArrow,  // ->
  kMinus,
  kPlus,
  kQuestion,
  kStar,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;  // raw spelling in the source
  std::string value;      // see TokenKind
  SourceLoc loc;
};

class Lexer {
 public:
  Lexer(std::string_view text, int first_line) : text_(text), line_(first_line) {}

  Token Next();
  // After a `<` token: the raw text up to its matching `>` (nested `<>` counted), leaving the
  // lexer just past that `>`. False at end of input (the lexer is then at the end).
  bool ScanAngleBody(std::string_view* body);
  SourceLoc location() const { return {line_, column_}; }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Bump();
  void SkipSpaceAndComments();
  Token Make(TokenKind kind, size_t begin, SourceLoc loc, std::string value = "");
  Token LexNumber(size_t begin, SourceLoc loc);
  Token LexString(size_t begin, SourceLoc loc);
  Token LexPrefixed(TokenKind kind, size_t begin, SourceLoc loc);

  std::string_view text_;
  size_t pos_ = 0;
  int line_;
  int column_ = 1;
};

// Letters, digits and the other characters MLIR allows inside identifiers.
bool IsIdentifierChar(char c);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_LEXER_H_
