#include "internal/CoordinationWarnings.h"
#include <iostream>
#include <mutex>
#include <set>

using namespace CoordinationPlugin;
using namespace std;

namespace {
    // Never destroyed: a force destroyed during the program's exit (a static one) still calls forget().
    mutex& warningsMutex = *new mutex();
    set<const void*>& warnedKeys = *new set<const void*>();
    CoordinationWarnings::Handler currentHandler = NULL;
}

CoordinationWarnings::Handler CoordinationWarnings::setHandler(Handler handler) {
    lock_guard<mutex> lock(warningsMutex);
    Handler previous = currentHandler;
    currentHandler = handler;
    return previous;
}

void CoordinationWarnings::warn(const string& message) {
    Handler handler;
    {
        lock_guard<mutex> lock(warningsMutex);
        handler = currentHandler;
    }
    if (handler != NULL)
        handler(message);
    else
        cerr << "Warning: " << message << endl;
}

bool CoordinationWarnings::warnOnce(const void* key, const string& message) {
    {
        lock_guard<mutex> lock(warningsMutex);
        if (!warnedKeys.insert(key).second)
            return false;
    }
    warn(message);
    return true;
}

void CoordinationWarnings::forget(const void* key) {
    lock_guard<mutex> lock(warningsMutex);
    warnedKeys.erase(key);
}
