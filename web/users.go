package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

const userGoneMessage = "That user no longer exists: someone removed them meanwhile. Open Users again to see who is left."

const lastAdminMessage = "%s is the last admin, so nothing was changed: the console needs an admin. Make another user admin first, then try again."

func (s *Server) usersPage(c echo.Context) error {
	return s.renderUsers(c, http.StatusOK, views.UserAddForm{Role: string(models.RoleSupport)})
}

func (s *Server) renderUsers(c echo.Context, status int, add views.UserAddForm) error {
	users, err := s.d.Identity.ListUsers(c.Request().Context())
	if err != nil {
		return err
	}
	me := userOf(c)
	rows := make([]views.UserRow, len(users))
	for i, u := range users {
		rows[i] = views.UserRow{ID: u.ID, Name: u.Name, Role: string(u.Role), CreatedAt: u.CreatedAt, Me: u.ID == me.ID}
	}
	return render(c, status, views.Users(s.shell(c, "Users", "users"), views.UsersPage{Users: rows, Add: add}))
}

func (s *Server) addUser(c echo.Context) error {
	name, roleText := strings.TrimSpace(c.FormValue("name")), c.FormValue("role")
	pw, pw2 := c.FormValue("password"), c.FormValue("password2")
	errs := map[string]string{}
	if msg := userNameMessage(app.CheckUserName(name)); msg != "" {
		errs["name"] = msg
	}
	role, err := app.ParseRole(roleText)
	if err != nil {
		errs["role"] = "Choose a role: admin or support."
	}
	if msg := newPasswordMessage(pw, pw2); msg != "" {
		errs["password"] = msg
	}
	form := views.UserAddForm{Name: name, Role: roleText, Errors: errs}
	if len(errs) > 0 {
		return s.renderUsers(c, http.StatusUnprocessableEntity, form)
	}
	if _, err := s.d.Identity.AddUser(c.Request().Context(), userOf(c).Name, name, role, pw); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			form.Errors["name"] = fmt.Sprintf("A user named %s already exists; pick another name.", name)
			return s.renderUsers(c, http.StatusUnprocessableEntity, form)
		}
		return err
	}
	s.flash(c, "ok", fmt.Sprintf("%s can sign in now as %s. Give them the password over a separate channel.", name, role))
	return redirect(c, "/users")
}

// targetUser loads the user a /users/:id route is about. A user removed
// meanwhile is a 404 for a page and a 409 for a change, both saying so.
func (s *Server) targetUser(c echo.Context) (app.User, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return app.User{}, echo.NewHTTPError(http.StatusNotFound)
	}
	u, err := s.d.Identity.UserByID(c.Request().Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		if c.Request().Method == http.MethodGet {
			return app.User{}, echo.NewHTTPError(http.StatusNotFound)
		}
		return app.User{}, userGone()
	}
	return u, err
}

// userGone answers a change to a user someone removed meanwhile.
func userGone() error { return echo.NewHTTPError(http.StatusConflict, userGoneMessage) }

// manageView is the page for u, with whether u is the only admin.
func (s *Server) manageView(c echo.Context, u app.User) (views.UserManage, error) {
	users, err := s.d.Identity.ListUsers(c.Request().Context())
	if err != nil {
		return views.UserManage{}, err
	}
	admins := 0
	for _, x := range users {
		if x.Role == models.RoleAdmin {
			admins++
		}
	}
	return views.UserManage{
		ID: u.ID, Name: u.Name, Role: string(u.Role), CreatedAt: u.CreatedAt, PasswordChangedAt: u.PasswordChangedAt,
		Me: u.ID == userOf(c).ID, OnlyAdmin: u.Role == models.RoleAdmin && admins == 1,
	}, nil
}

// renderUser shows one user's page, with a refusal or field errors.
func (s *Server) renderUser(c echo.Context, status int, u app.User, problem string, errs map[string]string) error {
	v, err := s.manageView(c, u)
	if err != nil {
		return err
	}
	v.Error, v.Errors = problem, errs
	return render(c, status, views.User(s.shell(c, u.Name, "users"), v))
}

func (s *Server) userPage(c echo.Context) error {
	u, err := s.targetUser(c)
	if err != nil {
		return err
	}
	return s.renderUser(c, http.StatusOK, u, "", nil)
}

func (s *Server) setUserRole(c echo.Context) error {
	u, err := s.targetUser(c)
	if err != nil {
		return err
	}
	roleText := c.FormValue("role")
	role, err := app.ParseRole(roleText)
	switch {
	case err != nil:
		return s.renderUser(c, http.StatusUnprocessableEntity, u, fmt.Sprintf("%q is not a role; choose admin or support.", roleText), nil)
	case role == u.Role:
		s.flash(c, "ok", fmt.Sprintf("%s is already %s; nothing changed.", u.Name, role))
		return redirect(c, userPathOf(u))
	}
	me := userOf(c)
	if _, err := s.d.Identity.SetUserRole(c.Request().Context(), me.Name, u.ID, role); err != nil {
		return s.userChangeFailed(c, u, err)
	}
	if u.ID == me.ID {
		// A demoted admin may no longer see Users; land somewhere they can.
		s.flash(c, "ok", "You are "+string(role)+" now. Admin pages are closed to you from here on.")
		return redirect(c, "/integrations")
	}
	s.flash(c, "ok", fmt.Sprintf("%s is %s now; this applies to their next click.", u.Name, role))
	return redirect(c, userPathOf(u))
}

// userChangeFailed answers a refused change to user u: the last admin is
// kept (409 on their page), a user removed meanwhile is a 409.
func (s *Server) userChangeFailed(c echo.Context, u app.User, err error) error {
	switch {
	case errors.Is(err, models.ErrLastAdmin):
		return s.renderUser(c, http.StatusConflict, u, fmt.Sprintf(lastAdminMessage, u.Name), nil)
	case errors.Is(err, models.ErrNotFound):
		return userGone()
	}
	return err
}

func (s *Server) resetPassword(c echo.Context) error {
	u, err := s.targetUser(c)
	if err != nil {
		return err
	}
	pw := c.FormValue("password")
	if msg := newPasswordMessage(pw, c.FormValue("password2")); msg != "" {
		return s.renderUser(c, http.StatusUnprocessableEntity, u, "", map[string]string{"password": msg})
	}
	// The reset ends every session of u in the same transaction: whoever
	// knew the old password is out now, not at their idle timeout.
	me := userOf(c)
	if _, err := s.d.Identity.ResetPassword(c.Request().Context(), me.Name, u.ID, pw); err != nil {
		return s.userChangeFailed(c, u, err)
	}
	if u.ID == me.ID {
		s.clearCookie(c, sessionCookie)
		return redirect(c, "/login")
	}
	s.flash(c, "ok", fmt.Sprintf("The password of %s is reset and they are signed out everywhere. Give them the new one over a separate channel.", u.Name))
	return redirect(c, userPathOf(u))
}

func (s *Server) removeUser(c echo.Context) error {
	u, err := s.targetUser(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		v, err := s.manageView(c, u)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.UserRemoveConfirm(s.shell(c, "Remove "+u.Name, "users"), v))
	}
	me := userOf(c)
	if _, err := s.d.Identity.RemoveUser(c.Request().Context(), me.Name, u.ID); err != nil {
		return s.userChangeFailed(c, u, err)
	}
	if u.ID == me.ID {
		// Removing a user ended this session too; drop the dead cookie.
		s.clearCookie(c, sessionCookie)
		return redirect(c, "/login")
	}
	s.flash(c, "ok", fmt.Sprintf("%s is removed and signed out.", u.Name))
	return redirect(c, "/users")
}

func userPathOf(u app.User) string { return "/users/" + strconv.FormatInt(u.ID, 10) }
