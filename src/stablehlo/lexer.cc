// The MLIR token lexer (lexer.h), after mlir/lib/AsmParser/Lexer.cpp: the same identifier,
// number and string rules, plus `1e5` read as a float (MLIR reads an integer then `e5`; no
// StableHLO text relies on that) and the StableHLO importer's own diagnostics.
#include "src/stablehlo/lexer.h"

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

bool IsIdentifierChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

void Lexer::Bump() {
  if (pos_ >= text_.size()) return;
  if (text_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      Bump();
    } else if (c == '/' && Peek(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') Bump();
    } else {
      return;
    }
  }
}

Token Lexer::Make(TokenKind kind, size_t begin, SourceLoc loc, std::string value) {
  Token token;
  token.kind = kind;
  token.text = text_.substr(begin, pos_ - begin);
  token.value = std::move(value);
  token.loc = loc;
  return token;
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  const SourceLoc loc = location();
  const size_t begin = pos_;
  if (pos_ >= text_.size()) return Make(TokenKind::kEof, begin, loc);
  const char c = text_[pos_];
  if (IsDigit(c)) return LexNumber(begin, loc);
  if (IsLetter(c) || c == '_') {
    // Bare identifiers do not take '-' (MLIR: [a-zA-Z_][a-zA-Z0-9_$.]*).
    while (pos_ < text_.size() && IsIdentifierChar(text_[pos_]) && text_[pos_] != '-') Bump();
    return Make(TokenKind::kBareId, begin, loc, std::string(text_.substr(begin, pos_ - begin)));
  }
  switch (c) {
    case '%':
      return LexPrefixed(TokenKind::kPercentId, begin, loc);
    case '#':
      return LexPrefixed(TokenKind::kHashId, begin, loc);
    case '^':
      return LexPrefixed(TokenKind::kCaretId, begin, loc);
    case '!':
      return LexPrefixed(TokenKind::kBangId, begin, loc);
    case '@': {
      Bump();
      if (Peek() == '"') {
        Token quoted = LexString(pos_, location());
        if (quoted.kind == TokenKind::kError) return quoted;
        return Make(TokenKind::kAtId, begin, loc, quoted.value);
      }
      return LexPrefixed(TokenKind::kAtId, begin, loc);
    }
    case '"':
      return LexString(begin, loc);
    default:
      break;
  }
  Bump();
  switch (c) {
    case '(':
      return Make(TokenKind::kLParen, begin, loc);
    case ')':
      return Make(TokenKind::kRParen, begin, loc);
    case '{':
      return Make(TokenKind::kLBrace, begin, loc);
    case '}':
      return Make(TokenKind::kRBrace, begin, loc);
    case '[':
      return Make(TokenKind::kLSquare, begin, loc);
    case ']':
      return Make(TokenKind::kRSquare, begin, loc);
    case '<':
      return Make(TokenKind::kLess, begin, loc);
    case '>':
      return Make(TokenKind::kGreater, begin, loc);
    case ',':
      return Make(TokenKind::kComma, begin, loc);
    case ':':
      return Make(TokenKind::kColon, begin, loc);
    case '=':
      return Make(TokenKind::kEqual, begin, loc);
    case '+':
      return Make(TokenKind::kPlus, begin, loc);
    case '?':
      return Make(TokenKind::kQuestion, begin, loc);
    case '*':
      return Make(TokenKind::kStar, begin, loc);
    case '-':
      if (Peek() == '>') {
        Bump();
        return Make(TokenKind::kArrow, begin, loc);
      }
      return Make(TokenKind::kMinus, begin, loc);
    default:
      break;
  }
  const auto byte = static_cast<unsigned char>(c);
  const std::string shown =
      byte >= 0x20 && byte < 0x7F ? StrCat("'", std::string(1, c), "'") : StrCat("byte ", byte);
  return Make(TokenKind::kError, begin, loc, StrCat("unexpected character ", shown));
}

Token Lexer::LexPrefixed(TokenKind kind, size_t begin, SourceLoc loc) {
  if (pos_ == begin) Bump();  // the sigil
  const size_t name_begin = pos_;
  while (pos_ < text_.size() && IsIdentifierChar(text_[pos_])) Bump();
  if (pos_ == name_begin) {
    return Make(TokenKind::kError, begin, loc,
                StrCat("expected a name after '", text_.substr(begin, 1), "'"));
  }
  return Make(kind, begin, loc, std::string(text_.substr(name_begin, pos_ - name_begin)));
}

Token Lexer::LexNumber(size_t begin, SourceLoc loc) {
  if (Peek() == '0' && Peek(1) == 'x' && IsHexDigit(Peek(2))) {
    Bump();
    Bump();
    while (IsHexDigit(Peek())) Bump();
    return Make(TokenKind::kInteger, begin, loc);
  }
  while (IsDigit(Peek())) Bump();
  bool is_float = false;
  if (Peek() == '.') {
    is_float = true;
    Bump();
    while (IsDigit(Peek())) Bump();
  }
  if ((Peek() == 'e' || Peek() == 'E') &&
      (IsDigit(Peek(1)) || ((Peek(1) == '-' || Peek(1) == '+') && IsDigit(Peek(2))))) {
    is_float = true;
    Bump();
    if (Peek() == '-' || Peek() == '+') Bump();
    while (IsDigit(Peek())) Bump();
  }
  return Make(is_float ? TokenKind::kFloat : TokenKind::kInteger, begin, loc);
}

Token Lexer::LexString(size_t begin, SourceLoc loc) {
  Bump();  // opening quote
  std::string value;
  while (true) {
    if (pos_ >= text_.size() || Peek() == '\n') {
      return Make(TokenKind::kError, begin, loc, "unterminated string literal");
    }
    const char c = Peek();
    Bump();
    if (c == '"') break;
    if (c != '\\') {
      value += c;
      continue;
    }
    const char escape = Peek();
    if (escape == '\\' || escape == '"') {
      value += escape;
      Bump();
    } else if (escape == 'n' || escape == 't') {
      value += escape == 'n' ? '\n' : '\t';
      Bump();
    } else if (IsHexDigit(escape) && IsHexDigit(Peek(1))) {
      value += static_cast<char>(HexValue(escape) * 16 + HexValue(Peek(1)));
      Bump();
      Bump();
    } else {
      return Make(TokenKind::kError, begin, loc, "invalid escape sequence in string literal");
    }
  }
  return Make(TokenKind::kString, begin, loc, std::move(value));
}

bool Lexer::ScanAngleBody(std::string_view* body) {
  const size_t begin = pos_;
  int depth = 1;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '<') ++depth;
    if (c == '>' && !(pos_ > begin && text_[pos_ - 1] == '-') && --depth == 0) {
      *body = text_.substr(begin, pos_ - begin);
      Bump();
      return true;
    }
    if (c == '\n') return false;  // a type never spans lines: stop at the first bad one
    Bump();
  }
  return false;
}

}  // namespace accy::stablehlo_internal
