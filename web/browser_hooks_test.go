package web_test

// closeBrowser is replaced by the browser tests once they land.
func closeBrowser() {}
